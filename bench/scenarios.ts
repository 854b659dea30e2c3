/**
 * The requests under load. Each is the same client-credentials request on the baseline and on the
 * service (one client, one resource, two scopes, ES256 JWT access tokens), plus the service's token
 * exchange, plain, with an actor (delegation: a service's client credentials token as `actor_token`)
 * and with an outside issuer's JWT as the subject token (federation: a trusted outside issuer).
 */
import { got } from 'got';

import { baselineClient, baselineResource } from './fixtures.ts';
import { signInForToken } from './flow.ts';
import type { Load } from './load.ts';
import type { OutsideIssuer } from './outside-issuer.ts';

export const scenarioNames = [
  'baseline',
  'client-credentials',
  'token-exchange',
  'token-exchange-actor',
  'token-exchange-outside-issuer',
] as const;
export type ScenarioName = (typeof scenarioNames)[number];

export const scenarioTitles: Record<ScenarioName, string> = {
  baseline: 'baseline: bare oidc-provider, client_credentials',
  'client-credentials': 'service, client_credentials',
  'token-exchange': 'service, token exchange',
  'token-exchange-actor': 'service, token exchange with an actor token',
  'token-exchange-outside-issuer': "service, token exchange of an outside issuer's JWT",
};

export const serviceAdmin = { id: 'bench-admin', secret: 'bench-admin-secret-0123456789' };

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

function tokenRequest(url: string, fields: Record<string, string>, client: { id: string; secret: string }): Load {
  return {
    url,
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.id, client.secret) },
  };
}

export function baselineLoad(base: string): Load {
  return tokenRequest(
    `${base}/token`,
    { grant_type: 'client_credentials', resource: baselineResource, scope: 'read write' },
    baselineClient,
  );
}

/**
 * Sets a fresh service up through its management API: a MachineToMachine application holding a role
 * with two scopes on the resource (client credentials); a user holding them, signed in at a front end
 * for API A, whose backend exchanges that token for one for the resource (token exchange), also
 * naming the first application's client credentials token as the actor (delegation). The same backend
 * also exchanges a JWT of `outside` for that user, trusted through a policy that finds the user by
 * email (made here, so no request measures a user's first sight).
 */
export async function prepareService(
  base: string,
  outside: OutsideIssuer,
): Promise<Record<Exclude<ScenarioName, 'baseline'>, Load>> {
  const token = await got
    .post(`${base}/oidc/token`, {
      form: { grant_type: 'client_credentials', resource: `${base}/api`, scope: 'all' },
      headers: { authorization: basic(serviceAdmin.id, serviceAdmin.secret) },
    })
    .json<{ access_token: string }>();
  const api = got.extend({ prefixUrl: `${base}/api`, headers: { authorization: `Bearer ${token.access_token}` } });
  const resource = await api
    .post('resources', { json: { name: 'Bench', indicator: baselineResource } })
    .json<{ id: string }>();
  const scopeIds = [];
  for (const name of ['read', 'write']) {
    scopeIds.push((await api.post(`resources/${resource.id}/scopes`, { json: { name } }).json<{ id: string }>()).id);
  }
  const role = await api
    .post('roles', { json: { name: 'bench', description: 'bench', type: 'MachineToMachine', scopeIds } })
    .json<{ id: string }>();
  /** A confidential application's secret is its named "Default secret" (Logto's; no legacy `secret`). */
  const withDefaultSecret = async ({ id }: { id: string }) => {
    const secrets = await api.get(`applications/${id}/secrets`).json<Array<{ name: string; value: string }>>();
    const secret = secrets.find(({ name }) => name === 'Default secret');
    if (!secret) {
      throw new Error(`application ${id} has no Default secret`);
    }
    return { id, secret: secret.value };
  };
  const application = await withDefaultSecret(
    await api.post('applications', { json: { name: 'bench', type: 'MachineToMachine' } }).json<{ id: string }>(),
  );
  await api.post(`applications/${application.id}/roles`, { json: { roleIds: [role.id] } });

  const apiA = 'https://api-a.bench.example.com';
  await api.post('resources', { json: { name: 'API A', indicator: apiA } });
  const userRole = await api
    .post('roles', { json: { name: 'bench-user', description: 'bench', scopeIds } })
    .json<{ id: string }>();
  const user = { username: 'bench_user', password: 'Bench-Password-9' };
  const email = 'bench_user@bench.example.com';
  const created = await api.post('users', { json: { ...user, primaryEmail: email } }).json<{ id: string }>();
  await api.post(`users/${created.id}/roles`, { json: { roleIds: [userRole.id] } });
  const redirectUri = 'http://frontend.bench/callback';
  const frontend = await api
    .post('applications', {
      json: {
        name: 'front end',
        type: 'SPA',
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      },
    })
    .json<{ id: string }>();
  const backend = await withDefaultSecret(
    await api
      .post('applications', {
        json: { name: 'API A', type: 'MachineToMachine', customClientMetadata: { allowTokenExchange: true } },
      })
      .json<{ id: string }>(),
  );
  const partnerApi = 'https://partner-api.bench.example.com';
  await api.post('trusted-issuers', {
    json: {
      name: 'bench partner',
      issuer: outside.issuer,
      jwksUri: outside.jwksUri,
      audience: partnerApi,
      algorithms: ['ES256'],
      userMapping: { claim: 'email', by: 'email' },
      applicationIds: [backend.id],
    },
  });
  const subjectToken = await signInForToken(base, frontend.id, redirectUri, user, apiA);
  const actorToken = await got
    .post(`${base}/oidc/token`, {
      form: { grant_type: 'client_credentials', resource: apiA },
      headers: { authorization: basic(application.id, application.secret) },
    })
    .json<{ access_token: string }>();
  const exchange = {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: subjectToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    resource: baselineResource,
    scope: 'read write',
  };

  return {
    'client-credentials': tokenRequest(
      `${base}/oidc/token`,
      { grant_type: 'client_credentials', resource: baselineResource, scope: 'read write' },
      application,
    ),
    'token-exchange': tokenRequest(`${base}/oidc/token`, exchange, backend),
    'token-exchange-actor': tokenRequest(
      `${base}/oidc/token`,
      {
        ...exchange,
        actor_token: actorToken.access_token,
        actor_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      },
      backend,
    ),
    'token-exchange-outside-issuer': tokenRequest(
      `${base}/oidc/token`,
      {
        ...exchange,
        subject_token: await outside.sign(partnerApi, email),
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      },
      backend,
    ),
  };
}

/** One request before the load: a scenario that does not answer 200 would measure its error path. */
export async function assertAnswers(name: ScenarioName, load: Load): Promise<void> {
  const response = await got.post(load.url, {
    body: load.body,
    headers: load.headers,
    throwHttpErrors: false,
    retry: { limit: 0 },
  });
  if (response.statusCode !== 200) {
    throw new Error(`${name}: ${load.url} answered ${response.statusCode}: ${response.body.slice(0, 200)}`);
  }
}
