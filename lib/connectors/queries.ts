import type { Knex } from 'knex';
import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';
import { anyJsonObject, jsonColumn } from '../storage/json-column.ts';
import { openConfigSecret, sealConfigSecret, sealedColumns } from '../storage/sealed-columns.ts';
import { bumpCacheVersion, type SharedCache } from '../storage/shared-cache.ts';
import {
  type Connector,
  connectorFactories,
  type ConnectorMetadata,
  connectorMetadata,
  type FactoryId,
} from './schemas.ts';
import { withMaskedSecret } from './secrets.ts';

export type ConnectorRow = {
  id: string;
  connector_id: FactoryId;
  target: string;
  config: string;
  metadata: string;
  sync_profile: number | boolean;
  created_at: number;
};

/** A stored connector, its configuration parsed (with the secret: for signing in, never for answers). */
export type StoredConnector = {
  id: string;
  factoryId: FactoryId;
  target: string;
  config: Record<string, unknown>;
  metadata: ConnectorMetadata;
  syncProfile: boolean;
};

/*
 * A config is not read through its connector kind's schema: an import may leave its secret out, its
 * secret is stored sealed, and older versions accepted endpoints the schema now refuses.
 */
const configOf = jsonColumn('social_connectors', 'config', anyJsonObject);
// Names by locale as older versions accepted them: any number, of locales of any length.
const metadataOf = jsonColumn(
  'social_connectors',
  'metadata',
  connectorMetadata.extend({ name: z.record(z.string(), z.string().max(128)).optional() }),
);

const toStored = (db: Queryable, row: ConnectorRow): StoredConnector => ({
  id: row.id,
  factoryId: row.connector_id,
  target: row.target,
  config: openConfigSecret(db, sealedColumns.socialConnectorSecrets, row.id, configOf(row.config)),
  metadata: metadataOf(row.metadata),
  syncProfile: Boolean(row.sync_profile),
});

/** The connector as Logto's `/api/connectors` shows it, its secret masked. */
export function toConnector(connector: StoredConnector): Connector {
  const factory = connectorFactories[connector.factoryId];
  return {
    id: connector.id,
    connectorId: connector.factoryId,
    target: connector.target,
    type: 'Social',
    name: connector.metadata.name ?? { en: factory.name },
    description: { en: factory.description },
    logo: connector.metadata.logo ?? '',
    logoDark: connector.metadata.logoDark ?? null,
    readme: '',
    platform: 'Universal',
    isStandard: true,
    config: withMaskedSecret(connector.config),
    metadata: connector.metadata,
    syncProfile: connector.syncProfile,
    enableTokenStorage: false,
  };
}

async function readConnectors(db: Queryable): Promise<StoredConnector[]> {
  const rows = await db('social_connectors').orderBy('created_at', 'asc').orderBy('id', 'asc');
  return (rows as ConnectorRow[]).map((row) => toStored(db, row));
}

/** All social connectors, from memory: sign-in reads them on every social step. */
export const listConnectors = (db: Queryable, cache: SharedCache) =>
  cache.get('connectors', 'social', () => readConnectors(db));

export async function findConnector(
  db: Queryable,
  cache: SharedCache,
  id: string,
): Promise<StoredConnector | undefined> {
  return (await listConnectors(db, cache)).find((connector) => connector.id === id);
}

const storedConfig = (db: Queryable, connector: StoredConnector) =>
  JSON.stringify(sealConfigSecret(db, sealedColumns.socialConnectorSecrets, connector.id, connector.config));

/** The connector, its row locked until the transaction ends (not from memory): read so before changing it. */
export async function findConnectorForUpdate(trx: Knex.Transaction, id: string): Promise<StoredConnector | undefined> {
  const row = await trx('social_connectors').where({ id }).forUpdate().first<ConnectorRow | undefined>();
  return row && toStored(trx, row);
}

export async function findConnectorByTargetOrId(
  db: Queryable,
  target: string,
  id: string,
): Promise<StoredConnector | undefined> {
  const row = await db('social_connectors').where({ target }).orWhere({ id }).first<ConnectorRow | undefined>();
  return row && toStored(db, row);
}

export async function insertConnector(trx: Queryable, connector: StoredConnector): Promise<void> {
  await trx('social_connectors').insert({
    id: connector.id,
    connector_id: connector.factoryId,
    target: connector.target,
    config: storedConfig(trx, connector),
    metadata: JSON.stringify(connector.metadata),
    sync_profile: connector.syncProfile,
    created_at: Date.now(),
  });
  await bumpCacheVersion(trx, 'connectors');
}

export async function updateConnector(trx: Queryable, connector: StoredConnector): Promise<void> {
  await trx('social_connectors')
    .where({ id: connector.id })
    .update({
      config: storedConfig(trx, connector),
      metadata: JSON.stringify(connector.metadata),
      sync_profile: connector.syncProfile,
    });
  await bumpCacheVersion(trx, 'connectors');
}

export async function deleteConnector(trx: Queryable, id: string): Promise<number> {
  const deleted = await trx('social_connectors').where({ id }).delete();
  await bumpCacheVersion(trx, 'connectors');
  return deleted;
}
