import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { idParams } from '../shared/entity-id.ts';
import { isUniqueViolation } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { withTransaction } from '../storage/transaction.ts';
import type { IdpSettings } from './external-idp.ts';
import {
  deleteConnector,
  findConnector,
  findConnectorByTargetOrId,
  findConnectorForUpdate,
  insertConnector,
  listConnectors,
  type StoredConnector,
  toConnector,
  updateConnector,
} from './queries.ts';
import { assertIdpReachable } from './reachability.ts';
import {
  connectorFactories,
  connectorSchema,
  createConnectorBody,
  type FactoryId,
  factoryIds,
  idpSettingsOf,
  parseConnectorConfig,
  updateConnectorBody,
} from './schemas.ts';
import { mergeConfig } from './secrets.ts';

const tag = 'Connectors';

const factorySchema = connectorSchema
  .pick({
    type: true,
    name: true,
    description: true,
    logo: true,
    logoDark: true,
    readme: true,
    platform: true,
    isStandard: true,
  })
  .extend({ id: z.string(), configTemplate: z.string() });

const factoryOf = (id: FactoryId) => ({
  id,
  type: 'Social' as const,
  name: { en: connectorFactories[id].name },
  description: { en: connectorFactories[id].description },
  logo: '',
  logoDark: null,
  readme: '',
  platform: 'Universal' as const,
  isStandard: true,
  configTemplate: JSON.stringify(connectorFactories[id].config.parse(templates[id])),
});

const templates: Record<FactoryId, Record<string, unknown>> = {
  oidc: { issuer: 'https://idp.example.com', clientId: '<client id>', clientSecret: '<client secret>' },
  oauth2: {
    authorizationEndpoint: 'https://idp.example.com/oauth/authorize',
    tokenEndpoint: 'https://idp.example.com/oauth/token',
    userInfoEndpoint: 'https://idp.example.com/userinfo',
    clientId: '<client id>',
    clientSecret: '<client secret>',
  },
};

const validConfig = (factoryId: FactoryId, config: Record<string, unknown>): Record<string, unknown> =>
  parseConnectorConfig(connectorFactories[factoryId].config, config);

const addressesOf = ({ issuer, authorizationEndpoint, tokenEndpoint, userInfoEndpoint, jwksUri }: IdpSettings) =>
  JSON.stringify([issuer, authorizationEndpoint, tokenEndpoint, userInfoEndpoint, jwksUri]);

/**
 * A configuration that is valid and whose IdP answers (else 400 `connector.invalid_config`, saying
 * why). The IdP is asked when the addresses are new: a changed secret or scope is saved while it is down.
 */
async function workingConfig(
  factoryId: FactoryId,
  config: Record<string, unknown>,
  stored?: Record<string, unknown>,
): Promise<void> {
  const settings = idpSettingsOf(factoryId, validConfig(factoryId, config));
  if (stored && addressesOf(settings) === addressesOf(idpSettingsOf(factoryId, stored))) {
    return;
  }
  await assertIdpReachable(
    settings,
    config.idTokenVerificationConfig === undefined ? 'jwksUri' : 'idTokenVerificationConfig.jwksUri',
  );
}

/** Social sign-in connectors (Logto's `/api/connectors`, social ones): generic OpenID Connect and OAuth 2.0. */
export function connectorRoutes(api: Api, { db, cache }: ServiceContext): void {
  async function getConnector(id: string): Promise<StoredConnector> {
    const connector = await findConnector(db, cache, id);
    if (!connector) {
      throw new RequestError('entity.not_exists_with_id', { entity: 'connector', id });
    }
    return connector;
  }

  api.add(
    {
      method: 'get',
      path: '/connector-factories',
      summary: 'The kinds of social connector there are',
      tag,
      response: z.array(factorySchema),
    },
    () => Promise.resolve(factoryIds.map(factoryOf)),
  );

  api.add(
    {
      method: 'get',
      path: '/connector-factories/:id',
      summary: 'One kind of social connector',
      tag,
      params: idParams,
      response: factorySchema,
      errors: [404],
    },
    ({ params }) => {
      if (!factoryIds.includes(params.id as FactoryId)) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'connector factory', id: params.id });
      }
      return Promise.resolve(factoryOf(params.id as FactoryId));
    },
  );

  api.add(
    {
      method: 'get',
      path: '/connectors',
      summary: 'List social connectors (secrets masked)',
      tag,
      query: z.object({ target: z.string().max(64).optional() }),
      response: z.array(connectorSchema),
    },
    async ({ query }) =>
      (await listConnectors(db, cache))
        .filter((connector) => !query.target || connector.target === query.target)
        .map(toConnector),
  );

  api.add(
    {
      method: 'get',
      path: '/connectors/:id',
      summary: 'Get a social connector (secret masked)',
      tag,
      params: idParams,
      response: connectorSchema,
      errors: [404],
    },
    async ({ params }) => toConnector(await getConnector(params.id)),
  );

  api.add(
    {
      method: 'post',
      path: '/connectors',
      summary: 'Create a social connector (refused when its identity provider does not answer)',
      tag,
      body: createConnectorBody,
      response: connectorSchema,
      errors: [422],
      // The IdP is asked before the transaction: no transaction waits on the network.
      transaction: false,
    },
    async ({ body }, _ctx, db) => {
      const target = body.metadata?.target;
      if (!target) {
        throw new RequestError('connector.should_specify_target');
      }
      await workingConfig(body.connectorId, body.config);
      const connector: StoredConnector = {
        id: body.id ?? generateId(),
        factoryId: body.connectorId,
        target,
        config: validConfig(body.connectorId, body.config),
        metadata: body.metadata ?? {},
        syncProfile: body.syncProfile ?? false,
      };
      await withTransaction(db, async (trx) => {
        if (await findConnectorByTargetOrId(trx, target, connector.id)) {
          throw new RequestError('connector.multiple_target_with_same_platform', { target });
        }
        try {
          await insertConnector(trx, connector);
        } catch (error) {
          // A concurrent create of the same target (or id) meets the unique index: the same answer.
          throw isUniqueViolation(error)
            ? new RequestError('connector.multiple_target_with_same_platform', { target })
            : error;
        }
      });
      return toConnector(connector);
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/connectors/:id',
      summary:
        'Update a social connector (omitted config keys, and a masked secret, are kept; a new config is refused when its identity provider does not answer)',
      tag,
      params: idParams,
      body: updateConnectorBody,
      response: connectorSchema,
      errors: [404],
      // As for a new connector: the IdP is asked before the transaction.
      transaction: false,
    },
    async ({ params, body }, _ctx, db) => {
      const seen = await getConnector(params.id);
      if (body.config) {
        // Each address this checks is either the body's or one already stored (and checked when it was).
        await workingConfig(seen.factoryId, mergeConfig(seen.config, body.config), seen.config);
      }
      return withTransaction(db, async (trx) => {
        const current = await findConnectorForUpdate(trx, params.id);
        if (!current) {
          throw new RequestError('entity.not_exists_with_id', { entity: 'connector', id: params.id });
        }
        if (body.metadata?.target && body.metadata.target !== current.target) {
          throw new RequestError('connector.can_not_modify_target');
        }
        const next: StoredConnector = {
          ...current,
          config: body.config
            ? validConfig(current.factoryId, mergeConfig(current.config, body.config))
            : current.config,
          metadata: { ...current.metadata, ...body.metadata },
          syncProfile: body.syncProfile ?? current.syncProfile,
        };
        await updateConnector(trx, next);
        return toConnector(next);
      });
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/connectors/:id',
      summary: 'Delete a social connector',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      const deleted = await deleteConnector(trx, params.id);
      if (deleted === 0) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'connector', id: params.id });
      }
    },
  );
}
