import { newEd25519Key } from '../../hooks/signing/signing-keys.ts';
import { openSecret, sealedColumns, sealSecret } from '../../storage/sealed-columns.ts';
import { boolean, type Entry, json, type Kind, number, secretToWrite, text } from '../kind.ts';
import { rowsOf, upsert } from '../queries.ts';

/** Webhooks with their delivery settings and (when secrets are asked for) their signing keys. */
export const hooks: Kind<'hooks'> = {
  list: 'hooks',

  async exported(db, options) {
    return (await rowsOf(db, 'hooks')).map((row) => ({
      id: String(row.id),
      name: String(row.name),
      events: JSON.parse(String(row.events)) as Entry<'hooks'>['events'],
      config: json(row.config) as Entry<'hooks'>['config'],
      enabled: boolean(row.enabled),
      disabledReason: text(row.disabled_reason),
      signatureScheme: text(row.signature_scheme) as Entry<'hooks'>['signatureScheme'],
      payload: text(row.payload) as Entry<'hooks'>['payload'],
      excludeApplicationIds: JSON.parse(text(row.exclude_application_ids) ?? '[]') as string[],
      ordering: text(row.ordering) as Entry<'hooks'>['ordering'],
      rateLimitPerSecond: row.rate_limit_per_second === null ? null : number(row.rate_limit_per_second),
      notifyEmail: text(row.notify_email),
      ...(options.withSecrets && {
        signingKey: openSecret(db, sealedColumns.hookSigningKeys, String(row.id), String(row.signing_key)),
        ...(typeof row.signing_private_key === 'string' && {
          signingPrivateKey: openSecret(db, sealedColumns.hookPrivateKeys, String(row.id), row.signing_private_key),
        }),
      }),
      createdAt: number(row.created_at),
    }));
  },

  async imported(trx, entries, progress) {
    for (const hook of entries) {
      const signingKey = await secretToWrite(
        trx,
        'hooks',
        hook.id,
        hook.signingKey,
        progress,
        `hook ${hook.id} (${hook.name}): created with a new signing key (the file had none); receivers must be given it`,
      );
      const ed25519 = hook.signatureScheme === 'ed25519';
      const privateKey = ed25519
        ? await secretToWrite(
            trx,
            'hooks',
            hook.id,
            hook.signingPrivateKey,
            progress,
            `hook ${hook.id} (${hook.name}): created with a new Ed25519 key pair (the file had none); receivers must fetch its public key`,
            newEd25519Key,
          )
        : undefined;
      await upsert(
        trx,
        'hooks',
        {
          id: hook.id,
          name: hook.name,
          events: JSON.stringify(hook.events),
          config: JSON.stringify(hook.config),
          ...(signingKey !== undefined && {
            signing_key: sealSecret(trx, sealedColumns.hookSigningKeys, hook.id, signingKey),
          }),
          ...(privateKey !== undefined && {
            signing_private_key: sealSecret(trx, sealedColumns.hookPrivateKeys, hook.id, privateKey),
          }),
          ...(!ed25519 && { signing_private_key: null }),
          // A rotation's overlap does not travel: an import ends it.
          previous_signing_key: null,
          previous_key_until: null,
          enabled: hook.enabled,
          disabled_reason: hook.disabledReason ?? null,
          signature_scheme: hook.signatureScheme ?? 'hmac-sha256',
          payload: hook.payload ?? 'full',
          exclude_application_ids: JSON.stringify(hook.excludeApplicationIds ?? []),
          ordering: hook.ordering ?? 'none',
          rate_limit_per_second: hook.rateLimitPerSecond ?? null,
          notify_email: hook.notifyEmail ?? null,
          created_at: hook.createdAt,
        },
        progress,
      );
    }
  },
};
