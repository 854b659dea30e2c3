import type { Knex } from 'knex';

import { managementApi } from '../shared/management-api.ts';
import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { generateSecret } from '../storage/ids.ts';
import { anyJsonObject, jsonColumn } from '../storage/json-column.ts';
import { listPage, type Page, whereContains } from '../storage/list.ts';
import { openSecret, sealedColumns, sealSecret } from '../storage/sealed-columns.ts';
import { type Search, whereSearch } from '../storage/search.ts';
import { bumpCacheVersion } from '../storage/shared-cache.ts';
import {
  type Application,
  type ApplicationType,
  customClientMetadataSchema,
  internalSecretPrefix,
  oidcClientMetadataSchema,
} from './schemas.ts';

type ApplicationRow = {
  id: string;
  name: string;
  description: string | null;
  type: ApplicationType;
  secret: string;
  oidc_client_metadata: string;
  custom_client_metadata: string;
  custom_data: string;
  is_third_party: number | boolean;
  created_at: number;
};

const internalSecret = () => `${internalSecretPrefix}${generateSecret()}`;

const oidcClientMetadataOf = jsonColumn('applications', 'oidc_client_metadata', oidcClientMetadataSchema);
const customClientMetadataOf = jsonColumn('applications', 'custom_client_metadata', customClientMetadataSchema);
// Custom data had no size limit before the routes' bodies had one.
const customDataOf = jsonColumn('applications', 'custom_data', anyJsonObject);

const storedSecretOf = (db: Queryable, row: ApplicationRow) =>
  openSecret(db, sealedColumns.applicationSecrets, row.id, row.secret);

/**
 * The secret is opened here, where rows are read: the token endpoint reads clients from the cache.
 * An internal secret (the legacy one deleted) is not the application's to show.
 */
function toApplication(db: Queryable, row: ApplicationRow): Application {
  const secret = storedSecretOf(db, row);
  return {
    tenantId,
    id: row.id,
    name: row.name,
    ...(!secret.startsWith(internalSecretPrefix) && { secret }),
    description: row.description,
    type: row.type,
    oidcClientMetadata: oidcClientMetadataOf(row.oidc_client_metadata),
    customClientMetadata: customClientMetadataOf(row.custom_client_metadata),
    protectedAppMetadata: null,
    customData: customDataOf(row.custom_data),
    isThirdParty: Boolean(row.is_third_party),
    appLevelAccessControlEnabled: false,
    createdAt: row.created_at,
  };
}

/**
 * The application as a client: with the secret the provider compares when the request presents
 * none of the named ones (the legacy secret, or the internal one that replaced it).
 */
export async function findClientApplication(
  db: Queryable,
  id: string,
): Promise<{ application: Application; clientSecret: string } | undefined> {
  const row = await db('applications').where({ id }).first<ApplicationRow | undefined>();
  return row && { application: toApplication(db, row), clientSecret: storedSecretOf(db, row) };
}

export async function insertApplication(db: Queryable, application: Application): Promise<void> {
  await db('applications').insert({
    id: application.id,
    name: application.name,
    description: application.description,
    type: application.type,
    secret: sealSecret(db, sealedColumns.applicationSecrets, application.id, application.secret ?? internalSecret()),
    oidc_client_metadata: JSON.stringify(application.oidcClientMetadata),
    custom_client_metadata: JSON.stringify(application.customClientMetadata),
    custom_data: JSON.stringify(application.customData),
    is_third_party: application.isThirdParty,
    created_at: application.createdAt,
  });
  await bumpCacheVersion(db, 'applications');
}

export async function findApplication(db: Queryable, id: string): Promise<Application | undefined> {
  const row = await db('applications').where({ id }).first<ApplicationRow | undefined>();
  return row && toApplication(db, row);
}

/** The application, its row locked until the transaction ends: read so before changing it. */
export async function findApplicationForUpdate(trx: Knex.Transaction, id: string): Promise<Application | undefined> {
  const row = await trx('applications').where({ id }).forUpdate().first<ApplicationRow | undefined>();
  return row && toApplication(trx, row);
}

/** Whether the application holds the role that opens the management API (Logto's `isAdmin`). */
export async function isManagementAdmin(db: Queryable, id: string): Promise<boolean> {
  return Boolean(await db('applications_roles').where({ application_id: id, role_id: managementApi.roleId }).first());
}

/** Logto's `isAdmin` switch: gives or takes the role that opens the management API. */
export async function setManagementAdmin(db: Queryable, id: string, isAdmin: boolean): Promise<void> {
  const held = { application_id: id, role_id: managementApi.roleId };
  if (isAdmin) {
    await db('applications_roles').insert(held).onConflict(['application_id', 'role_id']).ignore();
  } else {
    await db('applications_roles').where(held).delete();
  }
  await bumpCacheVersion(db, 'roles');
}

/** What Logto's application search covers (storage/search.ts). */
export const applicationSearchColumns = { id: 'id', name: 'name', description: 'description' } as const;

/** `search`: Logto's search parameters; `keyword`: an organization list's `q` (plain text, contained). */
export type ApplicationFilter = {
  ids?: string[];
  /** Logto's type names; those we do not offer (Protected, SAML) match nothing. */
  types?: string[];
  isThirdParty?: boolean;
  /** Leave out the applications holding this role (Logto's, for a role's "assign applications" list). */
  excludeRoleId?: string;
  /** Leave out the applications that are members of this organization. */
  excludeOrganizationId?: string;
  search?: Search;
  keyword?: string;
};

export async function listApplications(
  db: Queryable,
  filter: ApplicationFilter,
  page: Page,
): Promise<{ items: Application[]; total: number }> {
  const query = db('applications').select('*');
  if (filter.ids) {
    query.whereIn('id', filter.ids);
  }
  if (filter.types) {
    query.whereIn('type', filter.types);
  }
  if (filter.isThirdParty !== undefined) {
    query.where('is_third_party', filter.isThirdParty);
  }
  if (filter.excludeRoleId !== undefined) {
    query.whereNotIn('id', db('applications_roles').select('application_id').where({ role_id: filter.excludeRoleId }));
  }
  if (filter.excludeOrganizationId !== undefined) {
    query.whereNotIn(
      'id',
      db('organization_applications').select('application_id').where({ organization_id: filter.excludeOrganizationId }),
    );
  }
  if (filter.search) {
    whereSearch(db, query, filter.search, applicationSearchColumns);
  }
  if (filter.keyword) {
    whereContains(query, Object.values(applicationSearchColumns), filter.keyword);
  }
  const { rows, total } = await listPage<ApplicationRow>(query, page);
  return { items: rows.map((row) => toApplication(db, row)), total };
}

export async function updateApplication(db: Queryable, application: Application): Promise<void> {
  await db('applications')
    .where({ id: application.id })
    .update({
      name: application.name,
      description: application.description,
      // Absent: the internal secret that replaced the legacy one stays.
      ...(application.secret !== undefined && {
        secret: sealSecret(db, sealedColumns.applicationSecrets, application.id, application.secret),
      }),
      oidc_client_metadata: JSON.stringify(application.oidcClientMetadata),
      custom_client_metadata: JSON.stringify(application.customClientMetadata),
      custom_data: JSON.stringify(application.customData),
    });
  await bumpCacheVersion(db, 'applications');
}

/** Logto's "delete the legacy secret": an internal one takes its place (the provider needs one to compare). */
export async function replaceLegacySecret(db: Queryable, id: string): Promise<void> {
  await db('applications')
    .where({ id })
    .update({ secret: sealSecret(db, sealedColumns.applicationSecrets, id, internalSecret()) });
  await bumpCacheVersion(db, 'applications');
}

export async function deleteApplication(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('applications').where({ id }).delete();
  await bumpCacheVersion(db, 'applications');
  return deleted > 0;
}
