import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { Receiver } from '../hooks/receiver.ts';
import { eventually } from '../support/eventually.ts';
import { createApplication } from '../support/fixtures.ts';
import { type HttpResponse, type Json, startService, type TestService } from '../support/service.ts';

type Schema = Record<string, unknown>;
type Operation = { responses: Record<string, { content?: Record<string, { schema: Schema }> }> };
type OpenApiDocument = { paths: Record<string, Partial<Record<string, Operation>>> };

const redirectUri = 'http://app.test/callback';

/**
 * Every GET the document describes is called on a service holding one of each entity, and what it
 * answers is checked against the schema the document gives for that answer: the document says what
 * the routes really return.
 */
describe('OpenAPI document: the GET responses are what the document says', () => {
  let service: TestService;
  let receiver: Receiver;
  let document: OpenApiDocument;
  /** A path parameter's value by the segment before it (`/users/{userId}` → the user made in `before`). */
  let idsAfter: Partial<Record<string, string>>;
  /** Path parameters of the paths that need another entity than `idsAfter` gives. */
  let idsAt: Partial<Record<string, Record<string, string>>>;
  /** Query parameters a path needs. */
  let queries: Partial<Record<string, Record<string, string>>>;
  /** Calls for the paths a management token cannot read (the end user's APIs). */
  let callers: Partial<Record<string, () => Promise<HttpResponse>>>;

  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);

  /** The document's path template that `path` (`/api/users/u1`) is an instance of; a literal segment wins. */
  function templateOf(path: string): string {
    const candidates = Object.keys(document.paths).filter((template) =>
      new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(path),
    );
    candidates.sort((a, b) => (a.match(/\{/g) ?? []).length - (b.match(/\{/g) ?? []).length);
    expect(candidates.length, path).to.be.above(0);
    return candidates[0];
  }

  /** The documented success status of an operation and its answer's schema, compiled. */
  function success(method: string, template: string): { status: number; validate?: ValidateFunction } {
    const operation = document.paths[template][method];
    if (!operation) {
      expect.fail(`${method} ${template} is not documented`);
    }
    const [status, response] = Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b))[0];
    const schema = response.content?.['application/json']?.schema;
    return { status: Number(status), validate: schema && ajv.compile(schema) };
  }

  /** What is wrong with `response` to `method path`, measured against the document; undefined if nothing. */
  function disagreement(method: string, template: string, response: HttpResponse): string | undefined {
    const { status, validate } = success(method, template);
    if (response.statusCode !== status) {
      return `${method} ${template}: ${response.statusCode} (documented ${status}) ${JSON.stringify(response.body)}`;
    }
    if (validate && !validate(response.body)) {
      return `${method} ${template}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(response.body).slice(0, 400)}`;
    }
    return undefined;
  }

  /** A management write that sets the scene, its answer checked against the document as it goes. */
  async function write(method: 'post' | 'put' | 'patch', url: string, json: unknown): Promise<Json> {
    const response = await service.api[method](url, { json });
    const wrong = disagreement(method, templateOf(`/api/${url}`), response);
    expect(wrong, wrong).to.equal(undefined);
    return response.body;
  }
  const post = (url: string, json: unknown) => write('post', url, json);

  const ok = (response: HttpResponse, status = 200): Json => {
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(status);
    return response.body;
  };

  /** A user signed in through the real flow, with the browser that did it and an access token. */
  async function signIn(app: { id: string }, username: string, password: string) {
    const browser = new Browser(service);
    const { verifier } = await browser.authorize(app.id, redirectUri, {
      scope: 'openid profile email custom_data identities urn:logto:scope:sessions',
    });
    ok(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const verification = ok(
      await browser.call('post', 'api/experience/verification/password', {
        identifier: { type: 'username', value: username },
        password,
      }),
    );
    ok(
      await browser.call('post', 'api/experience/identification', { verificationId: verification.verificationId }),
      204,
    );
    const done = ok(await browser.call('post', 'api/experience/submit'));
    const landed = await browser.followToApplication(done.redirectTo);
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code') ?? '',
        code_verifier: verifier,
        client_id: app.id,
        redirect_uri: redirectUri,
      },
    });
    return String(ok(tokens).access_token);
  }

  before(async () => {
    service = await startService({ env: { HOOKS_RETRY_SCHEDULE: '0.2,0.2' } });
    receiver = await Receiver.start();
    const { api } = service;
    document = ok(await service.http.get('api/swagger.json'));

    const hook = await post('hooks', {
      name: 'responses',
      events: ['User.Created', 'User.Data.Updated'],
      config: { url: receiver.url },
    });
    const resource = await post('resources', { name: 'Orders', indicator: 'https://orders.test' });
    const scope = await post(`resources/${resource.id}/scopes`, { name: 'read:orders' });
    const user = await post('users', {
      username: 'alice',
      password: 'Correct-Horse-9',
      primaryEmail: 'alice@example.com',
      name: 'Alice',
      customData: { plan: 'gold' },
    });
    const role = await post('roles', { name: 'reader', description: 'reads', scopeIds: [scope.id] });
    await post(`users/${user.id}/roles`, { roleIds: [role.id] });
    const machine = await createApplication(service, 'MachineToMachine');
    const machineRole = await post('roles', { name: 'robot', description: 'a robot', type: 'MachineToMachine' });
    await post(`applications/${machine.id}/roles`, { roleIds: [machineRole.id] });

    const organizationScope = await post('organization-scopes', { name: 'read:members' });
    const organizationRole = await post('organization-roles', {
      name: 'member',
      organizationScopeIds: [organizationScope.id],
      resourceScopeIds: [scope.id],
    });
    const machineOrganizationRole = await post('organization-roles', { name: 'org-robot', type: 'MachineToMachine' });
    const organization = await post('organizations', { name: 'Acme', customData: { tier: 1 } });
    await post(`organizations/${organization.id}/users`, { userIds: [user.id] });
    await post(`organizations/${organization.id}/users/${user.id}/roles`, {
      organizationRoleIds: [organizationRole.id],
    });
    await post(`organizations/${organization.id}/applications`, { applicationIds: [machine.id] });
    await post(`organizations/${organization.id}/applications/${machine.id}/roles`, {
      organizationRoleIds: [machineOrganizationRole.id],
    });
    const sso = await post('sso-connectors', {
      providerName: 'OIDC',
      connectorName: 'Acme workforce',
      domains: ['acme.example'],
      config: {
        issuer: `${service.url}/oidc`,
        clientId: 'acme-client',
        clientSecret: 'acme-sso-secret-0123456789',
      },
    });
    const trustedIssuer = await post('trusted-issuers', {
      name: 'Partner',
      issuer: 'https://partner.example.com',
      jwksUri: 'https://partner.example.com/jwks',
      audience: 'https://api.example.com',
      userMapping: { claim: 'sub', by: 'jit' },
      applicationIds: [machine.id],
    });
    await post(`organizations/${organization.id}/jit/email-domains`, { emailDomain: 'acme.example' });
    await post(`organizations/${organization.id}/jit/roles`, { organizationRoleIds: [organizationRole.id] });
    await post(`organizations/${organization.id}/jit/sso-connectors`, { ssoConnectorIds: [sso.id] });
    const invitation = await post('organization-invitations', {
      invitee: 'bob@example.com',
      inviterId: user.id,
      organizationId: organization.id,
      organizationRoleIds: [organizationRole.id],
      expiresAt: Date.now() + 3_600_000,
    });
    const connector = await post('connectors', {
      connectorId: 'oidc',
      config: {
        issuer: `${service.url}/oidc`,
        clientId: 'social-client',
        clientSecret: 'social-secret-0123456789',
      },
      metadata: { target: 'own-idp', name: { en: 'Ourselves' } },
    });
    await post('verification-codes', { email: 'carol@example.com' });
    const [emailTemplate] = await write('put', 'email-templates', {
      templates: [
        {
          languageTag: 'en',
          templateType: 'SignIn',
          details: { subject: 'Code {{code}}', content: '<p>{{code}}</p>' },
        },
      ],
    });
    await write('put', 'custom-phrases/de', { signIn: { submit: 'Los' } });
    await write('put', 'captcha-provider', {
      config: { type: 'Turnstile', siteKey: 'site-key', secretKey: 'captcha-secret-0123456789' },
    });

    await write('patch', `users/${user.id}`, { name: 'Alice A.' });
    await write('patch', `users/${user.id}/custom-data`, { customData: { seats: 3 } });
    await write('patch', `applications/${machine.id}`, { description: 'a robot' });
    await write('patch', `roles/${role.id}`, { description: 'reads orders' });
    await write('patch', `organizations/${organization.id}`, { description: 'a customer' });
    await write('patch', `hooks/${hook.id}`, { name: 'responses, renamed' });
    await write('patch', 'sign-in-exp', { sentinelPolicy: { maxAttempts: 5, lockoutDuration: 30 } });

    const spa = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const token = await signIn(spa, 'alice', 'Correct-Horse-9');
    const browser = new Browser(service);
    await browser.authorize(spa.id, redirectUri);
    ok(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    // A sign-in to a third-party application, stopped at its consent page.
    const thirdParty = await createApplication(service, 'Traditional', {
      isThirdParty: true,
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const consenting = new Browser(service);
    await consenting.authorize(thirdParty.id, redirectUri);
    ok(await consenting.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const verified = ok(
      await consenting.call('post', 'api/experience/verification/password', {
        identifier: { type: 'username', value: 'alice' },
        password: 'Correct-Horse-9',
      }),
    );
    ok(
      await consenting.call('post', 'api/experience/identification', { verificationId: verified.verificationId }),
      204,
    );
    const submitted = ok(await consenting.call('post', 'api/experience/submit'));
    expect((await consenting.followToApplication(submitted.redirectTo, '/consent')).pathname).to.equal('/consent');

    await eventually(
      async () => (ok(await api.get(`hooks/${hook.id}/recent-logs`)) as unknown[]).length > 0,
      20_000,
      'a delivery log of the hook',
    );
    const [log] = ok(await api.get('logs')) as Array<{ id: string }>;
    const replay = (await post(`hooks/${hook.id}/replay`, { since: new Date(Date.now() - 60_000).toISOString() })) as {
      id: string;
    };

    idsAfter = {
      applications: machine.id,
      resources: resource.id,
      roles: role.id,
      oidc: 'private-keys',
      organizations: organization.id,
      users: user.id,
      'organization-scopes': organizationScope.id,
      'organization-roles': organizationRole.id,
      'organization-invitations': invitation.id,
      'connector-factories': 'oidc',
      connectors: connector.id,
      'sso-connectors': sso.id,
      'trusted-issuers': trustedIssuer.id,
      logs: log.id,
      hooks: hook.id,
      jobs: replay.id,
      'email-templates': emailTemplate.id,
      'custom-phrases': 'de',
    };
    // The machine-to-machine role is the one with applications.
    const oneTimeToken = await post('one-time-tokens', { email: 'dave@example.com' });
    idsAfter['one-time-tokens'] = oneTimeToken.id;
    const { sessions } = ok(await api.get(`users/${user.id}/sessions`)) as {
      sessions: Array<{ payload: { uid: string } }>;
    };
    idsAt = {
      '/api/roles/{id}/applications': { id: machineRole.id },
      '/api/users/{userId}/sessions/{sessionId}': { userId: user.id, sessionId: sessions[0].payload.uid },
    };
    queries = {
      '/api/experience/sso-connectors': { email: 'someone@acme.example' },
      '/api/verification-messages': { recipient: 'carol@example.com' },
    };
    const proof = ok(
      await service.http.post('api/verifications/password', {
        headers: { authorization: `Bearer ${token}` },
        json: { password: 'Correct-Horse-9' },
      }),
      201,
    ).verificationRecordId;
    const withToken = (path: string) => () =>
      service.http.get(path, { headers: { authorization: `Bearer ${token}`, 'logto-verification-id': proof } });
    callers = {
      '/api/my-account': withToken('api/my-account'),
      '/api/my-account/mfa-verifications': withToken('api/my-account/mfa-verifications'),
      '/api/my-account/grants': withToken('api/my-account/grants'),
      '/api/my-account/mfa-settings': withToken('api/my-account/mfa-settings'),
      '/api/my-account/logto-configs': withToken('api/my-account/logto-configs'),
      '/api/my-account/sessions': withToken('api/my-account/sessions'),
      '/api/interaction/application': () => browser.call('get', 'api/interaction/application'),
      '/api/interaction/consent': () => consenting.call('get', 'api/interaction/consent'),
      '/api/experience/interaction': () => browser.call('get', 'api/experience/interaction'),
      '/api/experience/sso-connectors': () =>
        browser.call(
          'get',
          `api/experience/sso-connectors?${new URLSearchParams(queries['/api/experience/sso-connectors'])}`,
        ),
    };
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  const getPaths = () => Object.keys(document.paths).filter((path) => document.paths[path].get);

  async function call(path: string): Promise<HttpResponse> {
    const caller = callers[path];
    if (caller) {
      return caller();
    }
    const url = path.replace(/\{(\w+)\}/g, (_match, name: string, offset: number) => {
      const value =
        idsAt[path]?.[name] ??
        idsAfter[
          path
            .slice(0, offset - 1)
            .split('/')
            .at(-1) ?? ''
        ];
      return encodeURIComponent(value ?? '');
    });
    return path.startsWith('/api/swagger.json') || path === '/api/status'
      ? service.http.get(url.slice(1))
      : service.api.get(url.replace(/^\/api\//, ''), { searchParams: queries[path] ?? {} });
  }

  it('fills the path parameters of every GET it calls', () => {
    const unfilled = getPaths().filter(
      (path) =>
        !callers[path] &&
        [...path.matchAll(/\/([^/]+)\/\{(\w+)\}/g)].some(
          ([, segment, name]) => !idsAt[path]?.[name] && !idsAfter[segment],
        ),
    );
    expect(unfilled).to.deep.equal([]);
  });

  it('answers every GET with the documented status and a body the documented schema accepts', async () => {
    const failures: string[] = [];
    for (const path of getPaths()) {
      const wrong = disagreement('get', path, await call(path));
      if (wrong) {
        failures.push(wrong);
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('checks non-empty answers for the lists of every domain', async () => {
    const lists = [
      '/api/users',
      '/api/applications',
      '/api/roles',
      '/api/resources',
      '/api/resources/{resourceId}/scopes',
      '/api/organizations',
      '/api/organizations/{id}/users',
      '/api/organization-roles',
      '/api/organization-scopes',
      '/api/organization-invitations',
      '/api/hooks',
      '/api/hooks/{id}/recent-logs',
      '/api/connectors',
      '/api/sso-connectors',
      '/api/trusted-issuers',
      '/api/users/{userId}/roles',
      '/api/logs',
    ];
    for (const path of lists) {
      const body = ok(await call(path));
      expect(body, path).to.be.an('array');
      expect((body as unknown[]).length, path).to.be.above(0);
    }
  });
});
