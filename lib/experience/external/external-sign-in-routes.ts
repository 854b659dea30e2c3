import type { Knex } from 'knex';
import { z } from 'zod';

import {
  completeAuthorization,
  IdpFailure,
  type IdpSettings,
  startAuthorization,
} from '../../connectors/external-idp.ts';
import { findConnector } from '../../connectors/queries.ts';
import { idpSettingsOf } from '../../connectors/schemas.ts';
import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { foreignJsonInput } from '../../http/limits.ts';
import type { Logger } from '../../http/logger.ts';
import { connectorFailures } from '../../metrics/metrics.ts';
import { entityId } from '../../shared/entity-id.ts';
import { findSsoConnector, ssoConnectorsForEmail } from '../../sso/queries.ts';
import { idpSettingsOfSso, ssoConfigSchema } from '../../sso/schemas.ts';
import { generateId } from '../../storage/ids.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { inSpan } from '../../tracing/spans.ts';
import { email } from '../../users/schemas.ts';
import type { ExperienceContext } from '../context.ts';
import { getRecord } from '../state.ts';

const tag = 'Experience';
const connectorParams = z.object({ connectorId: entityId });
const authorizationBody = z.strictObject({
  state: z.string().min(1).max(512),
  redirectUri: z.url({ protocol: /^https?$/ }).max(2048),
});
const verifyBody = z.strictObject({
  // The callback's query as the browser received it: code and state, or error and error_description.
  connectorData: foreignJsonInput,
  verificationId: z.string().min(1).max(64),
});

/** Where a connector id leads: a social connector's IdP, or an enterprise SSO connector's. */
async function socialIdp(db: Knex, cache: SharedCache, connectorId: string): Promise<IdpSettings> {
  const connector = await findConnector(db, cache, connectorId);
  if (!connector) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'connector', id: connectorId });
  }
  return idpSettingsOf(connector.factoryId, connector.config);
}

async function ssoIdp(db: Knex, cache: SharedCache, connectorId: string): Promise<IdpSettings> {
  const connector = await findSsoConnector(db, cache, connectorId);
  if (!connector) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'SSO connector', id: connectorId });
  }
  const config = ssoConfigSchema.safeParse(connector.config);
  if (!config.success) {
    throw new IdpFailure(
      'configuration',
      'connector.invalid_configuration',
      'Signing in with this provider is not available yet. Sign in another way.',
      new Error(
        `the SSO connector is not configured: ${config.error.issues.map((issue) => issue.path.join('.') || issue.message).join(', ')}`,
      ),
    );
  }
  return idpSettingsOfSso(config.data);
}

/**
 * Runs a step at the IdP (in a span of its own when tracing is on). A failure there is one log line
 * with the connector's id and the stage: at warn when the operator has something to fix
 * (configuration, discovery, token, userinfo), at info when the user went back on it or the callback
 * was not this sign-in's. Never a secret: the connector's settings stay out, and errors are logged
 * by their fixed fields.
 */
async function atIdp<T>(
  logger: Logger,
  where: { connectorKind: string; connectorId: string },
  step: () => Promise<T>,
): Promise<T> {
  return inSpan(
    'identity provider',
    { 'identity.connector_kind': where.connectorKind, 'identity.connector_id': where.connectorId },
    async (note) => {
      try {
        return await step();
      } catch (error) {
        if (error instanceof IdpFailure) {
          note({ 'identity.idp_stage': error.stage, 'identity.idp_error': error.idpError });
          connectorFailures.inc({ stage: error.stage });
          logger[error.stage === 'callback' ? 'info' : 'warn'](
            { ...where, stage: error.stage, idpError: error.idpError, err: error.cause },
            `sign-in at an identity provider failed (${error.stage})`,
          );
        }
        throw error;
      }
    },
  );
}

/**
 * Signing in at another identity provider: a social connector (`social`) or an organization's
 * enterprise IdP (`sso`). Both start with an authorization URI (state, nonce, PKCE kept in the
 * record) and end with the callback's data, redeemed server-side for who the user is.
 */
export function externalSignInRoutes(
  api: Api<'own-transactions'>,
  { db, cache, sessions, logger }: ExperienceContext,
): void {
  const kinds = [
    { path: 'social', type: 'Social', idp: socialIdp },
    { path: 'sso', type: 'EnterpriseSso', idp: ssoIdp },
  ] as const;

  for (const kind of kinds) {
    api.add(
      {
        method: 'post',
        path: `/experience/verification/${kind.path}/:connectorId/authorization-uri`,
        summary: `Start signing in with ${kind.type === 'Social' ? 'a social' : 'an enterprise SSO'} connector: where to send the browser`,
        tag,
        params: connectorParams,
        body: authorizationBody,
        response: z.object({ authorizationUri: z.string(), verificationId: z.string() }),
        errors: [404],
      },
      async ({ params, body }, ctx) => {
        const session = await sessions.load(ctx);
        const where = { connectorKind: kind.path, connectorId: params.connectorId };
        const { authorizationUri, authorization } = await atIdp(logger, where, async () =>
          startAuthorization(await kind.idp(db, cache, params.connectorId), body),
        );
        const id = generateId();
        session.state.records[id] = {
          id,
          type: kind.type,
          connectorId: params.connectorId,
          authorization,
          verified: false,
        };
        await session.save(session.state);
        return { authorizationUri, verificationId: id };
      },
    );

    api.add(
      {
        method: 'post',
        path: `/experience/verification/${kind.path}/:connectorId/verify`,
        summary: 'Finish the external sign-in with the callback data (code and state)',
        tag,
        params: connectorParams,
        body: verifyBody,
        response: z.object({ verificationId: z.string() }),
        errors: [404],
      },
      async ({ params, body }, ctx) => {
        const session = await sessions.load(ctx);
        const record = getRecord(session.state, body.verificationId);
        if (record.type !== kind.type || record.connectorId !== params.connectorId || record.verified) {
          throw new RequestError('session.verification_failed', {
            reason: 'This verification is not a sign-in started with this connector.',
          });
        }
        const where = { connectorKind: kind.path, connectorId: params.connectorId };
        const { issuer, userInfo } = await atIdp(logger, where, async () =>
          completeAuthorization(
            await kind.idp(db, cache, params.connectorId),
            record.authorization,
            body.connectorData,
          ),
        );
        session.state.records[record.id] = { ...record, issuer, userInfo, verified: true };
        await session.save(session.state);
        return { verificationId: record.id };
      },
    );
  }

  api.add(
    {
      method: 'get',
      path: '/experience/sso-connectors',
      summary: "The enterprise SSO connectors serving an email's domain (the sign-in page sends such users there)",
      tag,
      query: z.object({ email }),
      response: z.object({ connectorIds: z.array(z.string()) }),
    },
    async ({ query }, ctx) => {
      await sessions.interaction(ctx);
      return { connectorIds: (await ssoConnectorsForEmail(db, cache, query.email)).map((connector) => connector.id) };
    },
  );
}
