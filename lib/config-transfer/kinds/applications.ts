import { openSecret, sealedColumns, sealSecret } from '../../storage/sealed-columns.ts';
import { builtIn } from '../file.ts';
import {
  boolean,
  type Entry,
  type ExportOptions,
  json,
  type Kind,
  number,
  once,
  secretToWrite,
  text,
} from '../kind.ts';
import { linksOf, replaceLinks, rowsOf, upsert } from '../queries.ts';

/** The built-in applications and the bootstrap administrator, which the environment makes, not the file. */
const notExported = (options: ExportOptions) =>
  new Set([...builtIn.applicationIds, ...(options.bootstrapAdminId ? [options.bootstrapAdminId] : [])]);

/** Applications with their roles and their legacy secret (opened only when secrets are asked for). */
export const applications: Kind<'applications'> = {
  list: 'applications',

  async exported(db, options) {
    const applicationRoles = await linksOf(db, 'applications_roles', 'application_id', 'role_id');
    const skipped = notExported(options);
    return (await rowsOf(db, 'applications'))
      .filter((row) => !skipped.has(String(row.id)))
      .map((row) => ({
        id: String(row.id),
        name: String(row.name),
        description: text(row.description),
        type: String(row.type) as Entry<'applications'>['type'],
        ...(options.withSecrets
          ? { secret: openSecret(db, sealedColumns.applicationSecrets, String(row.id), String(row.secret)) }
          : {}),
        oidcClientMetadata: json(row.oidc_client_metadata) as Entry<'applications'>['oidcClientMetadata'],
        customClientMetadata: json(row.custom_client_metadata),
        customData: json(row.custom_data),
        isThirdParty: boolean(row.is_third_party),
        createdAt: number(row.created_at),
        roleIds: applicationRoles.get(String(row.id)) ?? [],
      }));
  },

  async imported(trx, entries, progress) {
    for (const application of entries) {
      const secret = await secretToWrite(
        trx,
        'applications',
        application.id,
        application.secret,
        progress,
        `application ${application.id} (${application.name}): created with a new secret (the file had none); read it in the console`,
      );
      await upsert(
        trx,
        'applications',
        {
          id: application.id,
          name: application.name,
          description: application.description,
          type: application.type,
          ...(secret !== undefined && {
            secret: sealSecret(trx, sealedColumns.applicationSecrets, application.id, secret),
          }),
          oidc_client_metadata: JSON.stringify(application.oidcClientMetadata),
          custom_client_metadata: JSON.stringify(application.customClientMetadata),
          custom_data: JSON.stringify(application.customData),
          is_third_party: application.isThirdParty,
          created_at: application.createdAt,
        },
        progress,
      );
      await replaceLinks(
        trx,
        'applications_roles',
        { application_id: application.id },
        once(application.roleIds).map((roleId) => ({ role_id: roleId })),
      );
    }
  },
};

/** An application's named secrets (Logto's `/applications/:id/secrets`), not those of applications not exported. */
export const applicationSecrets: Kind<'applicationSecrets'> = {
  list: 'applicationSecrets',

  async exported(db, options) {
    const skipped = notExported(options);
    return (await rowsOf(db, 'application_secrets'))
      .filter((row) => !skipped.has(String(row.application_id)))
      .map((row) => ({
        id: String(row.id),
        applicationId: String(row.application_id),
        name: String(row.name),
        ...(options.withSecrets && {
          value: openSecret(db, sealedColumns.namedApplicationSecrets, String(row.id), String(row.value)),
        }),
        createdAt: number(row.created_at),
        expiresAt: row.expires_at === null ? null : number(row.expires_at),
      }));
  },

  async imported(trx, entries, progress) {
    for (const secret of entries) {
      const value = await secretToWrite(
        trx,
        'application_secrets',
        secret.id,
        secret.value,
        progress,
        `application ${secret.applicationId}: secret ${secret.name} created with a new value (the file had none); read it in the console`,
      );
      await upsert(
        trx,
        'application_secrets',
        {
          id: secret.id,
          application_id: secret.applicationId,
          name: secret.name,
          ...(value !== undefined && {
            value: sealSecret(trx, sealedColumns.namedApplicationSecrets, secret.id, value),
          }),
          created_at: secret.createdAt,
          expires_at: secret.expiresAt,
        },
        progress,
      );
    }
  },
};
