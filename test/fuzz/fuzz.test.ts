import { Agent } from 'node:http';
import { expect } from 'chai';
import { got } from 'got';

import { Browser } from '../experience/browser.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import { apiOperations, type Operation } from '../support/openapi.ts';
import { adminClient, startService, type TestService } from '../support/service.ts';
import { badBodies, badPathValue, badStrings, bodyText, mutate, plausible, type Random, random } from './bad-inputs.ts';

/**
 * Bad input over every operation of the OpenAPI document (management, Experience and Account APIs)
 * and the OIDC endpoints: generated bodies, queries, path parameters, content types and credentials.
 * No answer may be a 5xx (but the documented 501/502 of an unsupported feature or a failing
 * upstream), a dropped connection, or an API error that is not JSON `{code, message}`; and a canary
 * user and application that no request names stay as they were.
 *
 * Bounded by a request count, not time, and seeded: FUZZ_SEED repeats a run, FUZZ_ROUNDS makes it longer.
 */

const seed = Number(process.env.FUZZ_SEED ?? 13);
const rounds = Number(process.env.FUZZ_ROUNDS ?? 24);
const concurrency = 4;
const redirectUri = 'http://app.test/callback';
/** 5xx answers that say what the service cannot do, not that it failed. */
const designedServerErrors = new Set(['connector.general']);

type Request = { label: string; method: string; url: string; headers: Record<string, string>; body?: string | Buffer };
type Check = 'api' | 'oauth' | 'page';

/** The OIDC endpoints, each with its own way of being asked badly. Their errors are OAuth's JSON (or, for a request Node itself refuses, the service's). */
type OidcEndpoint = { label: string; check: Check; build(rng: Random): Omit<Request, 'label'> };

function oauthParameters(rng: Random, clientId: string): Record<string, string> {
  const names = [
    'client_id',
    'redirect_uri',
    'response_type',
    'scope',
    'state',
    'nonce',
    'prompt',
    'max_age',
    'code_challenge',
    'code_challenge_method',
    'resource',
    'grant_type',
    'code',
    'refresh_token',
    'subject_token',
    'subject_token_type',
    'token',
    'token_type_hint',
    'id_token_hint',
    'post_logout_redirect_uri',
    'request',
    'claims',
    'ui_locales',
    'first_screen',
  ];
  const good: Partial<Record<string, string[]>> = {
    client_id: [clientId, adminClient.id],
    redirect_uri: [redirectUri],
    response_type: ['code', 'token', 'id_token', 'code id_token', 'none'],
    scope: ['openid', 'openid profile offline_access', 'all'],
    prompt: ['none', 'login', 'consent', 'select_account', 'create'],
    grant_type: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'password',
      'implicit',
    ],
    subject_token_type: [
      'urn:ietf:params:oauth:token-type:access_token',
      'urn:logto:token-type:impersonation_token',
      'urn:ietf:params:oauth:token-type:jwt',
    ],
    code_challenge_method: ['S256', 'plain'],
    resource: ['https://fuzz.invalid/api', 'urn:identity-service:management-api'],
  };
  const parameters: Record<string, string> = {};
  for (const name of names) {
    if (rng.chance(0.35)) {
      parameters[name] = good[name] && rng.chance(0.6) ? rng.pick(good[name]) : rng.pick(badStrings);
    }
  }
  return parameters;
}

const form = (parameters: Record<string, string>) => new URLSearchParams(parameters).toString();

/** What a header can carry (Node refuses to send the rest). */
const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e]/g, '?');

function clientAuthentication(rng: Random): Record<string, string> {
  return rng.pick<Record<string, string>>([
    {},
    { authorization: `Basic ${Buffer.from(`${adminClient.id}:${adminClient.secret}`).toString('base64')}` },
    { authorization: `Basic ${Buffer.from(`${rng.pick(badStrings)}:${rng.pick(badStrings)}`).toString('base64')}` },
    { authorization: headerSafe(`Basic ${rng.pick(badStrings)}`) },
    { authorization: headerSafe(rng.pick(badStrings)) },
  ]);
}

function oidcEndpoints(clientId: string): OidcEndpoint[] {
  const formPost = (path: string, check: Check, withClient: boolean) => ({
    label: `POST /${path}`,
    check,
    build: (rng: Random) => ({
      method: 'POST',
      url: path,
      headers: {
        'content-type': rng.chance(0.9)
          ? 'application/x-www-form-urlencoded'
          : rng.pick(['application/json', 'text/plain', '']),
        ...(withClient ? clientAuthentication(rng) : {}),
      },
      body: rng.chance(0.1) ? rng.pick(badBodies) : form(oauthParameters(rng, clientId)),
    }),
  });
  const query = (path: string, check: Check, headers: (rng: Random) => Record<string, string> = () => ({})) => ({
    label: `GET /${path}`,
    check,
    build: (rng: Random) => ({
      method: 'GET',
      url: `${path}?${form(oauthParameters(rng, clientId))}`,
      headers: headers(rng),
    }),
  });
  const bearer = (rng: Random) => ({
    authorization: headerSafe(rng.chance(0.5) ? `Bearer ${rng.pick(badStrings)}` : rng.pick(badStrings)),
  });
  return [
    query('oidc/.well-known/openid-configuration', 'oauth'),
    query('oidc/jwks', 'oauth'),
    query('oidc/auth', 'page'),
    formPost('oidc/auth', 'page', false),
    {
      label: 'GET /oidc/auth/{uid}',
      check: 'page',
      build: (rng) => ({
        method: 'GET',
        url: `oidc/auth/${encodeURIComponent(rng.pick(badStrings) || 'x')}`,
        headers: {},
      }),
    },
    formPost('oidc/token', 'oauth', true),
    formPost('oidc/token/introspection', 'oauth', true),
    formPost('oidc/token/revocation', 'oauth', true),
    query('oidc/me', 'oauth', bearer),
    {
      ...formPost('oidc/me', 'oauth', false),
      build: (rng: Random) => ({
        method: 'POST',
        url: 'oidc/me',
        headers: { ...bearer(rng), 'content-type': 'application/x-www-form-urlencoded' },
        body: form(oauthParameters(rng, clientId)),
      }),
    },
    query('oidc/session/end', 'page'),
    formPost('oidc/session/end', 'page', false),
    formPost('oidc/session/end/confirm', 'page', false),
  ];
}

describe('fuzz: bad input over every operation of the API and the OIDC endpoints', () => {
  let service: TestService;
  let operations: Operation[];
  let managementToken: string;
  let accountToken: string;
  let browser: Browser;
  let spa: { id: string };
  const owned: string[] = [];
  const canary = { userId: '', applicationId: '', password: 'Yellow-Feather-58' };

  const snapshot = async () => ({
    user: (await service.api.get(`users/${canary.userId}`)).body,
    userRoles: (await service.api.get(`users/${canary.userId}/roles`)).body,
    application: (await service.api.get(`applications/${canary.applicationId}`)).body,
    applicationRoles: (await service.api.get(`applications/${canary.applicationId}/roles`)).body,
  });
  let unchanged: Awaited<ReturnType<typeof snapshot>>;

  /** A user's access token through the sign-in flow, for the Account API. */
  async function signIn(username: string, password: string): Promise<string> {
    const signingIn = new Browser(service);
    const { verifier, location } = await signingIn.authorize(spa.id, redirectUri);
    expect(location).to.equal('/sign-in');
    await signingIn.call('put', 'api/experience', { interactionEvent: 'SignIn' });
    const verified = await signingIn.call('post', 'api/experience/verification/password', {
      identifier: { type: 'username', value: username },
      password,
    });
    await signingIn.call('post', 'api/experience/identification', { verificationId: verified.body.verificationId });
    const submitted = await signingIn.call('post', 'api/experience/submit');
    const back = await signingIn.followToApplication(submitted.body.redirectTo);
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: spa.id,
        redirect_uri: redirectUri,
      },
    });
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    return String(tokens.body.access_token);
  }

  before(async function () {
    this.timeout(120_000);
    service = await startService();
    operations = await apiOperations(service);

    const role = await service.api.post('roles', {
      json: { name: 'canary-role', description: 'the canary', type: 'User' },
    });
    const user = await service.api.post('users', {
      json: {
        username: 'canary',
        primaryEmail: 'canary@example.com',
        password: canary.password,
        name: 'Canary',
        customData: { sings: true },
        profile: { givenName: 'Tweety' },
      },
    });
    expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
    canary.userId = user.body.id;
    expect(
      (
        await service.api.put(`users/${canary.userId}/identities/canary-idp`, {
          json: { userId: 'canary-1', details: { sings: 'yes' } },
        })
      ).statusCode,
    ).to.equal(201);
    expect(
      (await service.api.post(`users/${canary.userId}/roles`, { json: { roleIds: [role.body.id] } })).statusCode,
    ).to.equal(201);
    const application = await createApplication(service, 'MachineToMachine', {
      oidcClientMetadata: { redirectUris: ['https://canary.example.com/cb'], postLogoutRedirectUris: [] },
      customData: { sings: true },
    });
    canary.applicationId = application.id;
    const m2mRole = await service.api.post('roles', {
      json: { name: 'canary-m2m', description: 'the canary', type: 'MachineToMachine' },
    });
    expect(
      (await service.api.post(`applications/${canary.applicationId}/roles`, { json: { roleIds: [m2mRole.body.id] } }))
        .statusCode,
    ).to.equal(201);
    unchanged = await snapshot();
    expect(unchanged.user).to.include({ username: 'canary', primaryEmail: 'canary@example.com' });
    expect(unchanged.userRoles).to.have.length(1);
    expect(unchanged.application.oidcClientMetadata.redirectUris).to.deep.equal(['https://canary.example.com/cb']);
    expect(unchanged.applicationRoles).to.have.length(1);

    // What the fuzz may name in paths: its own things, never the canary's.
    spa = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const fuzzUser = await service.api.post('users', { json: { username: 'fuzzer', password: 'Fuzzy-Wuzzy-77' } });
    const { resource, scopeIds } = await createResource(service, ['read']);
    const organization = await service.api.post('organizations', { json: { name: 'fuzz-org' } });
    const fuzzRole = await service.api.post('roles', {
      json: { name: 'fuzz-role', description: 'fuzz', type: 'User' },
    });
    owned.push(spa.id, fuzzUser.body.id, resource.id, scopeIds.read, organization.body.id, fuzzRole.body.id);

    accountToken = await signIn('fuzzer', 'Fuzzy-Wuzzy-77');
    const issued = await service.token(adminClient.id, adminClient.secret, {
      grant_type: 'client_credentials',
      resource: service.config.managementApiResource,
      scope: 'all',
    });
    managementToken = String(issued.body.access_token);
    // An interaction for the Experience API to act in.
    browser = new Browser(service);
    await browser.authorize(spa.id, redirectUri);
  });
  after(() => service.stop());

  /** One bad request to an operation of the OpenAPI document. */
  function apiRequest(operation: Operation, rng: Random): Request {
    const path = operation.path.replace(/\{(\w+)\}/g, () => badPathValue(rng, owned)).replace(/^\//, '');
    const query = new URLSearchParams();
    for (const parameter of operation.parameters.filter((candidate) => candidate.in === 'query')) {
      if (rng.chance(0.4)) {
        query.append(parameter.name, rng.chance(0.3) ? String(plausible(parameter.schema, rng)) : rng.pick(badStrings));
      }
    }
    if (rng.chance(0.2)) {
      query.append(rng.pick(['page', 'page_size', 'search', 'q', rng.pick(badStrings) || 'x']), rng.pick(badStrings));
    }
    const rawQuery = rng.chance(0.05)
      ? rng.pick(['%', 'a=%ff', 'page=%E0%A4%A', 'a[b]=1&a[c]=2', 'a=1&a=2&a=3'])
      : query.toString();

    const headers: Record<string, string> = {};
    const credential =
      operation.path.startsWith('/api/my-account') || operation.path.startsWith('/api/verifications')
        ? accountToken
        : managementToken;
    if (!operation.path.startsWith('/api/experience')) {
      headers.authorization = rng.chance(0.92)
        ? `Bearer ${credential}`
        : headerSafe(
            rng.pick(['', 'Bearer', `Bearer ${rng.pick(badStrings)}`, `Basic ${credential}`, `Bearer ${credential}x`]),
          );
    }
    let body: string | Buffer | undefined;
    // (A GET or DELETE with a body: Node's client sends none.)
    if (operation.body || (operation.method !== 'get' && rng.chance(0.1))) {
      const shape = operation.body ?? { type: 'object' };
      const choice = rng.int(10);
      const valid = plausible(shape, rng);
      body =
        choice < 2
          ? bodyText(valid)
          : choice < 7
            ? bodyText(mutate(choice < 5 ? valid : mutate(valid, rng), rng))
            : choice < 9
              ? rng.pick(badBodies)
              : Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]);
      headers['content-type'] = rng.chance(0.88)
        ? 'application/json'
        : rng.pick([
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/json; charset=latin1',
            '',
          ]);
    }
    return {
      label: `${operation.method.toUpperCase()} ${operation.path}`,
      method: operation.method.toUpperCase(),
      url: rawQuery ? `${path}?${rawQuery}` : path,
      headers,
      body,
    };
  }

  it('no 5xx, no dropped connection, and every API error is JSON {code, message}; the canary is unchanged', async function () {
    this.timeout(600_000);
    const endpoints = oidcEndpoints(spa.id);
    type Work = { request: Request; check: Check };
    const work: Work[] = [];
    const rng = random(seed);
    for (let round = 0; round < rounds; round++) {
      for (const operation of operations) {
        work.push({ request: apiRequest(operation, rng), check: 'api' });
      }
      for (const endpoint of endpoints) {
        work.push({ request: { label: endpoint.label, ...endpoint.build(rng) }, check: endpoint.check });
      }
    }

    const failures: string[] = [];
    const statuses = new Map<number, number>();
    // A connection per request: a reset is then this request's, not a kept-alive socket the server closed while idle.
    const agent = new Agent({ keepAlive: false });
    const client = got.extend({
      prefixUrl: service.url,
      cookieJar: browser.jar,
      agent: { http: agent },
      throwHttpErrors: false,
      retry: { limit: 0 },
      followRedirect: false,
      responseType: 'text',
      timeout: { request: 60_000 },
    });
    let next = 0;
    const worker = async () => {
      while (next < work.length) {
        const { request, check } = work[next++];
        const where = `${request.label} (${request.method} /${request.url.slice(0, 120)})`;
        try {
          const response = await client(request.url, {
            method: request.method as 'GET',
            headers: request.headers,
            body: request.body,
          });
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          const text = response.body;
          let json: { code?: unknown; message?: unknown; error?: unknown } | undefined;
          try {
            json = JSON.parse(text) as typeof json;
          } catch {
            json = undefined;
          }
          if (response.statusCode >= 500 && !(typeof json?.code === 'string' && designedServerErrors.has(json.code))) {
            failures.push(`${where}: ${response.statusCode} ${text.slice(0, 200)}`);
          } else if (
            response.statusCode >= 400 &&
            check === 'api' &&
            (typeof json?.code !== 'string' ||
              typeof json.message !== 'string' ||
              !/^application\/json/.test(String(response.headers['content-type'])))
          ) {
            failures.push(`${where}: ${response.statusCode} is not a JSON API error: ${text.slice(0, 200)}`);
          } else if (
            response.statusCode >= 400 &&
            check === 'oauth' &&
            typeof json?.error !== 'string' &&
            typeof json?.code !== 'string'
          ) {
            failures.push(`${where}: ${response.statusCode} is not a JSON OAuth error: ${text.slice(0, 200)}`);
          }
        } catch (error) {
          failures.push(`${where}: no answer (${(error as Error).message})`);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));

    const covered = operations.length + endpoints.length;
    console.log(
      `      fuzz: ${work.length} requests over ${covered} operations (${operations.length} of /api/swagger.json, ${endpoints.length} OIDC), seed ${seed}, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    // Server errors and dropped connections first: they matter most.
    const severity = (failure: string) => (/: (5\d\d|no answer)/.test(failure) ? 0 : 1);
    failures.sort((a, b) => severity(a) - severity(b));
    expect(
      failures.slice(0, 40),
      `${failures.length} bad answers, ${failures.filter((failure) => severity(failure) === 0).length} of them 5xx or none`,
    ).to.deep.equal([]);

    expect(await snapshot()).to.deep.equal(unchanged);
    const verified = await service.api.post(`users/${canary.userId}/password/verify`, {
      json: { password: canary.password },
    });
    expect(verified.statusCode, JSON.stringify(verified.body)).to.equal(204);
  });
});
