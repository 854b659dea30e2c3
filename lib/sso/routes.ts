import type { Knex } from 'knex';
import { z } from 'zod';

import { parseConnectorConfig } from '../connectors/schemas.ts';
import { mergeConfig } from '../connectors/secrets.ts';
import { pageOf, paginationQuery, setTotal } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { idParams } from '../shared/entity-id.ts';
import { isUniqueViolation } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import {
  deleteSsoConnector,
  findSsoConnector,
  findSsoConnectorForUpdate,
  findSsoConnectorIdByName,
  insertSsoConnector,
  listSsoConnectors,
  type StoredSsoConnector,
  toSsoConnector,
  updateSsoConnector,
} from './queries.ts';
import { createSsoConnectorBody, ssoConfigSchema, ssoConnectorSchema, updateSsoConnectorBody } from './schemas.ts';

const tag = 'SSO connectors';

const validConfig = (config: Record<string, unknown>): StoredSsoConnector['config'] =>
  parseConnectorConfig(ssoConfigSchema, config);

/** Saves under the name check; a concurrent save of the same name meets the unique index: the same 409. */
async function withNameFree(
  trx: Knex.Transaction,
  name: string,
  exceptId: string | undefined,
  save: () => Promise<void>,
): Promise<void> {
  const holder = await findSsoConnectorIdByName(trx, name);
  if (holder !== undefined && holder !== exceptId) {
    throw new RequestError('single_sign_on.duplicate_connector_name', { name });
  }
  try {
    await save();
  } catch (error) {
    throw isUniqueViolation(error) ? new RequestError('single_sign_on.duplicate_connector_name', { name }) : error;
  }
}

/** Enterprise SSO connectors (Logto's `/api/sso-connectors`): OpenID Connect IdPs with the email domains they serve. */
export function ssoConnectorRoutes(api: Api, { db, cache }: ServiceContext): void {
  async function getSsoConnector(id: string): Promise<StoredSsoConnector> {
    const connector = await findSsoConnector(db, cache, id);
    if (!connector) {
      throw new RequestError('entity.not_exists_with_id', { entity: 'SSO connector', id });
    }
    return connector;
  }

  api.add(
    {
      method: 'get',
      path: '/sso-connector-providers',
      summary: 'The enterprise SSO providers there are',
      tag,
      response: z.array(
        z.object({
          providerName: z.string(),
          providerType: z.string(),
          logo: z.string(),
          logoDark: z.string(),
          description: z.string(),
          name: z.string(),
        }),
      ),
    },
    () =>
      Promise.resolve([
        {
          providerName: 'OIDC',
          providerType: 'oidc',
          logo: '',
          logoDark: '',
          description: 'Any OpenID Connect identity provider, found by discovery from its issuer.',
          name: 'OIDC',
        },
      ]),
  );

  api.add(
    {
      method: 'get',
      path: '/sso-connectors',
      summary: 'List SSO connectors (secrets masked)',
      tag,
      query: paginationQuery,
      response: z.array(ssoConnectorSchema),
    },
    async ({ query }, ctx) => {
      const all = await listSsoConnectors(db, cache);
      const page = pageOf(query);
      setTotal(ctx, all.length);
      const items = page.limit === undefined ? all : all.slice(page.offset, page.offset + page.limit);
      return items.map(toSsoConnector);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/sso-connectors/:id',
      summary: 'Get an SSO connector (secret masked)',
      tag,
      params: idParams,
      response: ssoConnectorSchema,
      errors: [404],
    },
    async ({ params }) => toSsoConnector(await getSsoConnector(params.id)),
  );

  api.add(
    {
      method: 'post',
      path: '/sso-connectors',
      summary: 'Create an SSO connector',
      tag,
      body: createSsoConnectorBody,
      response: ssoConnectorSchema,
      errors: [409],
    },
    async ({ body }, _ctx, trx) => {
      const connector: StoredSsoConnector = {
        id: generateId(),
        providerName: body.providerName,
        connectorName: body.connectorName,
        config: body.config ? validConfig(body.config) : {},
        domains: [...new Set(body.domains ?? [])],
        branding: body.branding ?? {},
        syncProfile: body.syncProfile ?? false,
        createdAt: Date.now(),
      };
      await withNameFree(trx, connector.connectorName, undefined, () => insertSsoConnector(trx, connector));
      return toSsoConnector(connector);
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/sso-connectors/:id',
      summary: 'Update an SSO connector (omitted config keys, and a masked secret, are kept)',
      tag,
      params: idParams,
      body: updateSsoConnectorBody,
      response: ssoConnectorSchema,
      errors: [404, 409],
    },
    async ({ params, body }, _ctx, trx) => {
      const current = await findSsoConnectorForUpdate(trx, params.id);
      if (!current) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'SSO connector', id: params.id });
      }
      const next: StoredSsoConnector = {
        ...current,
        connectorName: body.connectorName ?? current.connectorName,
        config: body.config ? validConfig(mergeConfig(current.config, body.config)) : current.config,
        domains: body.domains ? [...new Set(body.domains)] : current.domains,
        branding: { ...current.branding, ...body.branding },
        syncProfile: body.syncProfile ?? current.syncProfile,
      };
      await withNameFree(trx, next.connectorName, next.id, () => updateSsoConnector(trx, next));
      return toSsoConnector(next);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/sso-connectors/:id',
      summary: 'Delete an SSO connector (and the identities users hold through it)',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      const deleted = await deleteSsoConnector(trx, params.id);
      if (deleted === 0) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'SSO connector', id: params.id });
      }
    },
  );
}
