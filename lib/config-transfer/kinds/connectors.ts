import type { Queryable } from '../../storage/database.ts';
import { openConfigSecret, sealConfigSecret, sealedColumns } from '../../storage/sealed-columns.ts';
import { connectorSecretField } from '../file.ts';
import { boolean, type Entry, type ExportOptions, type ImportProgress, json, type Kind, number } from '../kind.ts';
import { rowsOf, storedRow, upsert } from '../queries.ts';

type ConnectorTable = 'social_connectors' | 'sso_connectors';

const sealedColumnsOf = (table: ConnectorTable) =>
  table === 'social_connectors' ? sealedColumns.socialConnectorSecrets : sealedColumns.ssoConnectorSecrets;

/** A connector's configuration opened, with its client secret only when secrets are asked for. */
function exportedConfig(db: Queryable, table: ConnectorTable, id: string, stored: unknown, options: ExportOptions) {
  const config = openConfigSecret(db, sealedColumnsOf(table), id, json(stored));
  return options.withSecrets
    ? config
    : Object.fromEntries(Object.entries(config).filter(([key]) => key !== connectorSecretField));
}

/**
 * A connector's configuration to store: the file's secret sealed, or, when the file has none, the
 * stored one kept; a connector left with no secret is noted (the operator must set one).
 */
async function importedConfig(
  trx: Queryable,
  table: ConnectorTable,
  id: string,
  config: Record<string, unknown>,
  progress: ImportProgress,
  note: string,
): Promise<string> {
  if (typeof config[connectorSecretField] === 'string') {
    return JSON.stringify(sealConfigSecret(trx, sealedColumnsOf(table), id, config));
  }
  const stored = await storedRow(trx, table, id, 'config');
  const kept = stored ? json(stored.config)[connectorSecretField] : undefined;
  if (kept === undefined && Object.keys(config).length > 0) {
    progress.notes.push(note);
  }
  // The stored value is sealed for this very row: it is copied as it is.
  return JSON.stringify(kept === undefined ? config : { ...config, [connectorSecretField]: kept });
}

/** Enterprise SSO connectors. */
export const ssoConnectors: Kind<'ssoConnectors'> = {
  list: 'ssoConnectors',

  async exported(db, options) {
    return (await rowsOf(db, 'sso_connectors')).map((row) => ({
      id: String(row.id),
      providerName: String(row.provider_name) as Entry<'ssoConnectors'>['providerName'],
      connectorName: String(row.connector_name),
      config: exportedConfig(db, 'sso_connectors', String(row.id), row.config, options),
      domains: JSON.parse(String(row.domains)) as string[],
      branding: json(row.branding),
      syncProfile: boolean(row.sync_profile),
      createdAt: number(row.created_at),
    }));
  },

  async imported(trx, entries, progress) {
    for (const connector of entries) {
      const config = await importedConfig(
        trx,
        'sso_connectors',
        connector.id,
        connector.config,
        progress,
        `SSO connector ${connector.id} (${connector.connectorName}): no client secret (the file had none); set it in the console`,
      );
      await upsert(
        trx,
        'sso_connectors',
        {
          id: connector.id,
          provider_name: connector.providerName,
          connector_name: connector.connectorName,
          config,
          domains: JSON.stringify(connector.domains),
          branding: JSON.stringify(connector.branding),
          sync_profile: connector.syncProfile,
          created_at: connector.createdAt,
        },
        progress,
      );
    }
  },
};

/** Social connectors (the file's `connectors`). */
export const socialConnectors: Kind<'connectors'> = {
  list: 'connectors',

  async exported(db, options) {
    return (await rowsOf(db, 'social_connectors')).map((row) => ({
      id: String(row.id),
      connectorId: String(row.connector_id) as Entry<'connectors'>['connectorId'],
      target: String(row.target),
      config: exportedConfig(db, 'social_connectors', String(row.id), row.config, options),
      metadata: json(row.metadata),
      syncProfile: boolean(row.sync_profile),
      createdAt: number(row.created_at),
    }));
  },

  async imported(trx, entries, progress) {
    for (const connector of entries) {
      const config = await importedConfig(
        trx,
        'social_connectors',
        connector.id,
        connector.config,
        progress,
        `connector ${connector.id} (${connector.target}): no client secret (the file had none); set it in the console`,
      );
      await upsert(
        trx,
        'social_connectors',
        {
          id: connector.id,
          connector_id: connector.connectorId,
          target: connector.target,
          config,
          metadata: JSON.stringify(connector.metadata),
          sync_profile: connector.syncProfile,
          created_at: connector.createdAt,
        },
        progress,
      );
    }
  },
};
