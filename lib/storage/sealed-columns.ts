import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

import { ConfigError } from '../config/env.ts';
import { type Queryable, secretsOf } from './database.ts';
import { missingKeyMessage } from './secret-box.ts';

/** A column that holds a secret (or a JSON column with a secret in `field`), keyed by `id`. */
export type SealedColumn = { table: string; column: string; field?: string };

/**
 * Every place a secret is stored. With SECRETS_ENCRYPTION_KEY set they are written sealed; a
 * database dump then holds nothing that signs a token or passes a client's authentication.
 */
export const sealedColumns = {
  /** Private JWKs and cookie keys. */
  oidcKeys: { table: 'oidc_keys', column: 'value' },
  applicationSecrets: { table: 'applications', column: 'secret' },
  /** Named client secrets (Logto's application secrets), keyed by their row id: a rename keeps them. */
  namedApplicationSecrets: { table: 'application_secrets', column: 'value' },
  hookSigningKeys: { table: 'hooks', column: 'signing_key' },
  /** A hook's Ed25519 private key, and the key (JSON) it signed with before its last rotation. */
  hookPrivateKeys: { table: 'hooks', column: 'signing_private_key' },
  hookPreviousKeys: { table: 'hooks', column: 'previous_signing_key' },
  totpSecrets: { table: 'user_mfa_verifications', column: 'secret' },
  /** Magic links' tokens, shown again by the API as Logto shows them; found by their digest. */
  oneTimeTokens: { table: 'one_time_tokens', column: 'token' },
  /** Personal access tokens, shown again by the API as Logto shows them; found by their digest. */
  personalAccessTokens: { table: 'personal_access_tokens', column: 'value' },
  socialConnectorSecrets: { table: 'social_connectors', column: 'config', field: 'clientSecret' },
  ssoConnectorSecrets: { table: 'sso_connectors', column: 'config', field: 'clientSecret' },
  /** The captcha provider's secret key (Turnstile's secret, reCAPTCHA Enterprise's API key). */
  captchaProviderSecrets: { table: 'captcha_providers', column: 'config', field: 'secretKey' },
} as const satisfies Record<string, SealedColumn>;

const placeOf = (where: SealedColumn, id: string) =>
  `${where.table}.${where.column}${where.field ? `.${where.field}` : ''}:${id}`;

export const sealSecret = (db: Queryable, where: SealedColumn, id: string, value: string): string =>
  secretsOf(db).seal(value, placeOf(where, id));

export const openSecret = (db: Queryable, where: SealedColumn, id: string, stored: string): string =>
  secretsOf(db).open(stored, placeOf(where, id));

/**
 * The key a sealed bearer token is found by (its own unique column): sealing is randomised, so the
 * sealed value cannot be looked up, and the digest alone does not give the token back.
 */
export const lookupDigest = (token: string): string => createHash('sha256').update(token).digest('hex');

type Config = Record<string, unknown>;

/** A JSON config with its secret field sealed: the rest stays readable in the database. */
export function sealConfigSecret(
  db: Queryable,
  where: SealedColumn & { field: string },
  id: string,
  config: Config,
): Config {
  const secret = config[where.field];
  return typeof secret === 'string' ? { ...config, [where.field]: sealSecret(db, where, id, secret) } : config;
}

export function openConfigSecret(
  db: Queryable,
  where: SealedColumn & { field: string },
  id: string,
  config: Config,
): Config {
  const secret = config[where.field];
  return typeof secret === 'string' ? { ...config, [where.field]: openSecret(db, where, id, secret) } : config;
}

/**
 * Start-up check. `secret_keys` lists every key that may have sealed a value here (each process
 * records its key before writing with it): one this process was not given stops it with a line
 * naming SECRETS_ENCRYPTION_KEY, rather than a failure at the first token request.
 */
export async function checkSecretKeys(db: Knex): Promise<void> {
  const box = secretsOf(db);
  const recorded = await db('secret_keys').pluck<string[]>('id');
  const missing = recorded.find((keyId) => !box.holds(keyId));
  if (missing) {
    throw new ConfigError(missingKeyMessage(missing));
  }
  if (box.currentKeyId && !recorded.includes(box.currentKeyId)) {
    await db('secret_keys').insert({ id: box.currentKeyId, created_at: Date.now() }).onConflict('id').ignore();
  }
}

const batchSize = 200;

/** The stored value as it is written now: sealed with the current key (or plaintext without one). */
function resealed(db: Queryable, where: SealedColumn, id: string, stored: string): string {
  const box = secretsOf(db);
  if (!where.field) {
    return box.isCurrent(stored) ? stored : sealSecret(db, where, id, openSecret(db, where, id, stored));
  }
  const inConfig = { ...where, field: where.field };
  const config = JSON.parse(stored) as Config;
  const secret = config[where.field];
  if (typeof secret !== 'string' || box.isCurrent(secret)) {
    return stored;
  }
  return JSON.stringify(sealConfigSecret(db, inConfig, id, openConfigSecret(db, inConfig, id, config)));
}

/** Rewrites one column's values that are not in the current form; returns how many it rewrote. */
async function resealColumn(db: Knex, where: SealedColumn): Promise<number> {
  let rewritten = 0;
  let after = '';
  for (;;) {
    const rows: Array<{ id: string; stored: string | null }> = await db(where.table)
      .where('id', '>', after)
      .orderBy('id')
      .limit(batchSize)
      .select('id', { stored: where.column });
    for (const { id, stored } of rows) {
      const next = stored === null ? stored : resealed(db, where, id, stored);
      // Conditional on the value read: a concurrent change (written sealed already) is kept.
      if (
        next !== stored &&
        (await db(where.table)
          .where({ id, [where.column]: stored })
          .update({ [where.column]: next })) === 1
      ) {
        rewritten++;
      }
    }
    if (rows.length < batchSize) {
      return rewritten;
    }
    after = rows[rows.length - 1].id;
  }
}

export type ResealReport = { rewritten: Record<string, number>; retiredKeyIds: string[] };

/**
 * `rotate-secrets`: every secret re-sealed with SECRETS_ENCRYPTION_KEY (plaintext ones too; without
 * a key, every secret is written back in plaintext). Then only the current key stays recorded, and
 * the old keys are no longer needed. Every instance must already run with the current key: one still
 * writing with an old key is caught by a second pass finding work again.
 */
export async function resealSecrets(db: Knex): Promise<ResealReport> {
  await checkSecretKeys(db);
  const rewritten: Record<string, number> = {};
  for (const [name, where] of Object.entries(sealedColumns)) {
    rewritten[name] = await resealColumn(db, where);
  }
  for (const [name, where] of Object.entries(sealedColumns)) {
    if ((await resealColumn(db, where)) > 0) {
      throw new Error(
        `${name}: values were written with another key while rotating: is an instance still running with an old SECRETS_ENCRYPTION_KEY?`,
      );
    }
  }
  const currentKeyId = secretsOf(db).currentKeyId;
  const retiredKeyIds = await db('secret_keys')
    .whereNot('id', currentKeyId ?? '')
    .pluck<string[]>('id');
  await db('secret_keys').whereIn('id', retiredKeyIds).delete();
  return { rewritten, retiredKeyIds };
}
