import type { Knex } from 'knex';
import { z } from 'zod';

import { withMaskedSecret } from '../connectors/secrets.ts';
import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { anyJsonObject, jsonColumn } from '../storage/json-column.ts';
import { openConfigSecret, sealConfigSecret, sealedColumns } from '../storage/sealed-columns.ts';
import { bumpCacheVersion, type SharedCache } from '../storage/shared-cache.ts';
import type { SsoConnector } from './schemas.ts';

type SsoConnectorRow = {
  id: string;
  provider_name: 'OIDC';
  connector_name: string;
  config: string;
  domains: string;
  branding: string;
  sync_profile: number | boolean;
  created_at: number;
};

/** A stored SSO connector with its secret (for signing in; answers mask it). */
export type StoredSsoConnector = {
  id: string;
  providerName: 'OIDC';
  connectorName: string;
  /** Empty until an admin configures it; checked with `ssoConfigSchema` where it signs someone in. */
  config: Record<string, unknown>;
  domains: string[];
  branding: SsoConnector['branding'];
  syncProfile: boolean;
  createdAt: number;
};

/*
 * Read as loosely as their writers wrote them: the configuration import checks branding only as an
 * object and may leave a config's secret out, and older versions accepted any http(s) issuer. A
 * config is not read through `ssoConfigSchema` (its defaults would show in answers, and its secret
 * is stored sealed): sign-in checks it with that schema.
 */
const configOf = jsonColumn('sso_connectors', 'config', anyJsonObject);
const domainsOf = jsonColumn('sso_connectors', 'domains', z.array(z.string()));
const brandingOf = jsonColumn(
  'sso_connectors',
  'branding',
  z.looseObject({ displayName: z.string().optional(), logo: z.string().optional(), darkLogo: z.string().optional() }),
);

const toStored = (db: Queryable, row: SsoConnectorRow): StoredSsoConnector => ({
  id: row.id,
  providerName: row.provider_name,
  connectorName: row.connector_name,
  config: openConfigSecret(db, sealedColumns.ssoConnectorSecrets, row.id, configOf(row.config)),
  domains: domainsOf(row.domains),
  branding: brandingOf(row.branding),
  syncProfile: Boolean(row.sync_profile),
  createdAt: row.created_at,
});

export const toSsoConnector = (connector: StoredSsoConnector): SsoConnector => ({
  tenantId,
  ...connector,
  config: withMaskedSecret(connector.config),
  enableTokenStorage: false,
  name: 'OIDC',
  providerType: 'oidc',
  providerLogo: '',
  providerLogoDark: '',
});

async function readSsoConnectors(db: Queryable): Promise<StoredSsoConnector[]> {
  const rows = await db('sso_connectors').orderBy('created_at', 'asc').orderBy('id', 'asc');
  return (rows as SsoConnectorRow[]).map((row) => toStored(db, row));
}

/** All SSO connectors, from memory: the sign-in page asks for them by email domain. */
export const listSsoConnectors = (db: Queryable, cache: SharedCache) =>
  cache.get('connectors', 'sso', () => readSsoConnectors(db));

export async function findSsoConnector(
  db: Queryable,
  cache: SharedCache,
  id: string,
): Promise<StoredSsoConnector | undefined> {
  return (await listSsoConnectors(db, cache)).find((connector) => connector.id === id);
}

/** The connector, its row locked until the transaction ends (not from memory): read so before changing it. */
export async function findSsoConnectorForUpdate(
  trx: Knex.Transaction,
  id: string,
): Promise<StoredSsoConnector | undefined> {
  const row = await trx('sso_connectors').where({ id }).forUpdate().first<SsoConnectorRow | undefined>();
  return row && toStored(trx, row);
}

/** The id of the connector of that name, if any. */
export async function findSsoConnectorIdByName(db: Queryable, name: string): Promise<string | undefined> {
  const row = await db('sso_connectors').where({ connector_name: name }).first<{ id: string } | undefined>('id');
  return row?.id;
}

/** The connectors whose domains include the email's (case-insensitive). */
export async function ssoConnectorsForEmail(
  db: Queryable,
  cache: SharedCache,
  email: string,
): Promise<StoredSsoConnector[]> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return (await listSsoConnectors(db, cache)).filter((connector) => connector.domains.includes(domain));
}

const columnsOf = (db: Queryable, connector: StoredSsoConnector) => ({
  provider_name: connector.providerName,
  connector_name: connector.connectorName,
  config: JSON.stringify(sealConfigSecret(db, sealedColumns.ssoConnectorSecrets, connector.id, connector.config)),
  domains: JSON.stringify(connector.domains),
  branding: JSON.stringify(connector.branding),
  sync_profile: connector.syncProfile,
});

export async function insertSsoConnector(trx: Queryable, connector: StoredSsoConnector): Promise<void> {
  await trx('sso_connectors').insert({
    id: connector.id,
    created_at: connector.createdAt,
    ...columnsOf(trx, connector),
  });
  await bumpCacheVersion(trx, 'connectors');
}

export async function updateSsoConnector(trx: Queryable, connector: StoredSsoConnector): Promise<void> {
  await trx('sso_connectors').where({ id: connector.id }).update(columnsOf(trx, connector));
  await bumpCacheVersion(trx, 'connectors');
}

export async function deleteSsoConnector(trx: Queryable, id: string): Promise<number> {
  const deleted = await trx('sso_connectors').where({ id }).delete();
  await bumpCacheVersion(trx, 'connectors');
  return deleted;
}

/** Those of `ids` that name an SSO connector. */
export async function existingSsoConnectorIds(db: Queryable, ids: string[]): Promise<string[]> {
  return db('sso_connectors').whereIn('id', ids).pluck<string[]>('id');
}
