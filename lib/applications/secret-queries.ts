import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId, generateSecret } from '../storage/ids.ts';
import { openSecret, sealedColumns, sealSecret } from '../storage/sealed-columns.ts';
import { bumpCacheVersion } from '../storage/shared-cache.ts';

/* `application_secrets`: an application's named client secrets (Logto's application secrets). */

type ApplicationSecretRow = {
  id: string;
  application_id: string;
  name: string;
  value: string;
  created_at: number | string;
  expires_at: number | string | null;
};

/** Logto's shape; `value` is the secret itself. */
export type ApplicationSecret = {
  tenantId: string;
  applicationId: string;
  name: string;
  value: string;
  createdAt: number;
  expiresAt: number | null;
};

/** A new secret, with the id its sealed value is bound to. */
export type NewApplicationSecret = ApplicationSecret & { id: string };

const where = sealedColumns.namedApplicationSecrets;

/** The value is opened here, where rows are read: the token endpoint reads them from the cache. */
const toSecret = (db: Queryable, row: ApplicationSecretRow): ApplicationSecret => ({
  tenantId,
  applicationId: row.application_id,
  name: row.name,
  value: openSecret(db, where, row.id, row.value),
  createdAt: Number(row.created_at),
  expiresAt: row.expires_at === null ? null : Number(row.expires_at),
});

/** Oldest first, as they were added. */
export async function listApplicationSecrets(db: Queryable, applicationId: string): Promise<ApplicationSecret[]> {
  const rows = await db('application_secrets')
    .where({ application_id: applicationId })
    .orderBy([{ column: 'created_at' }, { column: 'name' }])
    .select<ApplicationSecretRow[]>('*');
  return rows.map((row) => toSecret(db, row));
}

export async function countApplicationSecrets(db: Queryable, applicationId: string): Promise<number> {
  const [{ count }] = await db('application_secrets')
    .where({ application_id: applicationId })
    .count<Array<{ count: number | string }>>({ count: '*' });
  return Number(count);
}

export async function findApplicationSecret(
  db: Queryable,
  applicationId: string,
  name: string,
): Promise<ApplicationSecret | undefined> {
  const row = await db('application_secrets')
    .where({ application_id: applicationId, name })
    .first<ApplicationSecretRow | undefined>();
  return row && toSecret(db, row);
}

/** Clients are cached under `applications`: every instance sees the change on its next request. */
export async function insertApplicationSecret(db: Queryable, secret: NewApplicationSecret): Promise<void> {
  await db('application_secrets').insert({
    id: secret.id,
    application_id: secret.applicationId,
    name: secret.name,
    value: sealSecret(db, where, secret.id, secret.value),
    created_at: secret.createdAt,
    expires_at: secret.expiresAt,
  });
  await bumpCacheVersion(db, 'applications');
}

/** Logto's name for the secret a new confidential application is created with. */
export const defaultSecretName = 'Default secret';

export async function insertDefaultSecret(db: Queryable, applicationId: string): Promise<void> {
  await insertApplicationSecret(db, {
    id: generateId(),
    tenantId,
    applicationId,
    name: defaultSecretName,
    value: generateSecret(),
    createdAt: Date.now(),
    expiresAt: null,
  });
}

export async function renameApplicationSecret(
  db: Queryable,
  applicationId: string,
  name: string,
  newName: string,
): Promise<boolean> {
  const renamed = await db('application_secrets')
    .where({ application_id: applicationId, name })
    .update({ name: newName });
  await bumpCacheVersion(db, 'applications');
  return renamed > 0;
}

export async function deleteApplicationSecret(db: Queryable, applicationId: string, name: string): Promise<boolean> {
  const deleted = await db('application_secrets').where({ application_id: applicationId, name }).delete();
  await bumpCacheVersion(db, 'applications');
  return deleted > 0;
}
