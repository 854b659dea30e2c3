import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { freePort, logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { startStandInIssuer } from '../support/stand-in-idp.ts';
import { unique } from '../support/values.ts';

/** `/api/connectors` and `/api/connector-factories`: shapes, validation, masked secrets. */
describe('social connectors: the management API', () => {
  let service: TestService;
  const target = () => unique('target');
  const secret = 'client-secret-0123456789abcdef';
  // A connector is saved only if its IdP answers: the service itself is the IdP here (its own issuer).
  let oidcConfig: { issuer: string; clientId: string; clientSecret: string };
  let oauth2Config: Record<string, unknown> & { profileMap: Record<string, string> };

  before(async () => {
    service = await startService();
    const issuer = service.config.issuer;
    oidcConfig = { issuer, clientId: 'client-1', clientSecret: secret };
    oauth2Config = {
      authorizationEndpoint: `${issuer}/auth`,
      tokenEndpoint: `${issuer}/token`,
      userInfoEndpoint: `${issuer}/me`,
      clientId: 'client-2',
      clientSecret: secret,
      profileMap: { id: 'sub', email: 'email', name: 'name' },
    };
  });
  after(() => service.stop());

  it('lists the factories: generic OpenID Connect and OAuth 2.0', async () => {
    const factories = await service.api.get('connector-factories');
    expectStatus(factories, 200);
    expect(factories.body.map((factory: { id: string }) => factory.id).sort()).to.deep.equal(['oauth2', 'oidc']);
    for (const factory of factories.body) {
      expect(factory).to.include({ type: 'Social', platform: 'Universal' });
      expect(JSON.parse(factory.configTemplate)).to.have.property('clientId');
    }
    expectStatus(await service.api.get('connector-factories/oidc'), 200);
    expectError(await service.api.get('connector-factories/facebook'), 404, 'entity.not_exists_with_id');
  });

  it('creates, reads, updates and deletes a connector, never showing its secret', async () => {
    const created = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config: oidcConfig, metadata: { target: target(), name: { en: 'Corp IdP' } } },
    });
    expectStatus(created, 200);
    const connector = created.body;
    expect(connector).to.include({ connectorId: 'oidc', type: 'Social', syncProfile: false });
    expect(connector.name).to.deep.equal({ en: 'Corp IdP' });
    expect(connector.config).to.include({
      issuer: oidcConfig.issuer,
      clientId: 'client-1',
      scope: 'openid profile email',
    });
    expect(connector.config.clientSecret).to.be.a('string').and.not.equal(secret);
    expect(JSON.stringify(connector)).to.not.include(secret);

    const read = await service.api.get(`connectors/${connector.id}`);
    expectStatus(read, 200);
    expect(read.body).to.deep.equal(connector);
    const listed = await service.api.get('connectors');
    expect(JSON.stringify(listed.body)).to.not.include(secret);
    expect(listed.body.map((item: { id: string }) => item.id)).to.include(connector.id);
    expect((await service.api.get('connectors', { searchParams: { target: connector.target } })).body).to.deep.equal([
      connector,
    ]);

    // A form saved unchanged sends the mask back: the secret is kept, other changes apply.
    const patched = await service.api.patch(`connectors/${connector.id}`, {
      json: { config: { ...connector.config, clientId: 'client-1b' }, syncProfile: true },
    });
    expectStatus(patched, 200);
    expect(patched.body.config).to.include({ clientId: 'client-1b', clientSecret: connector.config.clientSecret });
    expect(patched.body.syncProfile).to.equal(true);
    const rotated = await service.api.patch(`connectors/${connector.id}`, {
      json: { config: { clientSecret: 'another-secret-0123456789' } },
    });
    expectStatus(rotated, 200);
    expect(rotated.body.config.clientSecret).to.not.equal(connector.config.clientSecret);
    expect(rotated.body.config.clientId).to.equal('client-1b');
    expectError(
      await service.api.patch(`connectors/${connector.id}`, { json: { metadata: { target: 'other-target' } } }),
      400,
      'connector.can_not_modify_target',
    );

    expectStatus(await service.api.delete(`connectors/${connector.id}`), 204);
    expectError(await service.api.get(`connectors/${connector.id}`), 404, 'entity.not_exists_with_id');
    expectError(await service.api.delete(`connectors/${connector.id}`), 404, 'entity.not_exists_with_id');
    expectError(
      await service.api.patch(`connectors/${connector.id}`, { json: { syncProfile: false } }),
      404,
      'entity.not_exists_with_id',
    );
  });

  it('creates an OAuth 2.0 connector with a profile map', async () => {
    const created = await service.api.post('connectors', {
      json: { connectorId: 'oauth2', config: oauth2Config, metadata: { target: target() } },
    });
    expectStatus(created, 200);
    expect(created.body.config.profileMap).to.deep.equal(oauth2Config.profileMap);
    expect(JSON.stringify(created.body)).to.not.include(secret);
  });

  it('refuses an invalid configuration with 400 connector.invalid_config and what is wrong', async () => {
    const missing = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config: { issuer: 'not a url' }, metadata: { target: target() } },
    });
    expectError(missing, 400, 'connector.invalid_config');
    const paths = missing.body.details.map((detail: { path: string }) => detail.path);
    expect(paths).to.include.members(['config.issuer', 'config.clientId', 'config.clientSecret']);
    for (const detail of missing.body.details) {
      expect(detail.message).to.be.a('string').and.not.equal('');
    }

    const neither = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config: { clientId: 'c', clientSecret: secret }, metadata: { target: target() } },
    });
    expectError(neither, 400, 'connector.invalid_config');
    expect(neither.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal(['config.issuer']);
    expect(neither.body.message).to.include('config.issuer');

    const halfExplicit = await service.api.post('connectors', {
      json: {
        connectorId: 'oidc',
        config: { ...oidcConfig, issuer: undefined, authorizationEndpoint: `${oidcConfig.issuer}/auth` },
        metadata: { target: target() },
      },
    });
    expectError(halfExplicit, 400, 'connector.invalid_config');
    expect(halfExplicit.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal([
      'config.tokenEndpoint',
      'config.idTokenVerificationConfig.jwksUri',
    ]);

    const overriding = await service.api.post('connectors', {
      json: {
        connectorId: 'oidc',
        config: { ...oidcConfig, customConfig: { redirect_uri: 'https://elsewhere.example' } },
        metadata: { target: target() },
      },
    });
    expectError(overriding, 400, 'connector.invalid_config');
    expect(overriding.body.details[0].path).to.equal('config.customConfig');

    const oauth2 = await service.api.post('connectors', {
      json: {
        connectorId: 'oauth2',
        config: { ...oauth2Config, tokenEndpoint: 'ftp://idp.example.com/token' },
        metadata: { target: target() },
      },
    });
    expectError(oauth2, 400, 'connector.invalid_config');
    expect(oauth2.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal(['config.tokenEndpoint']);

    const created = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config: oidcConfig, metadata: { target: target() } },
    });
    const patched = await service.api.patch(`connectors/${created.body.id}`, { json: { config: { issuer: 42 } } });
    expectError(patched, 400, 'connector.invalid_config');
    expect(patched.body.details[0].path).to.equal('config.issuer');
  });

  /** Logto's own OIDC connector configuration: explicit endpoints, the ID token's keys, no `openid` in the scope. */
  const logtoShape = () => ({
    authorizationEndpoint: `${oidcConfig.issuer}/auth`,
    tokenEndpoint: `${oidcConfig.issuer}/token`,
    userInfoEndpoint: `${oidcConfig.issuer}/me`,
    idTokenVerificationConfig: { jwksUri: `${oidcConfig.issuer}/jwks`, issuer: oidcConfig.issuer },
    clientId: 'client-3',
    clientSecret: secret,
    scope: 'profile email',
    responseType: 'code',
    grantType: 'authorization_code',
    tokenEndpointAuthMethod: 'client_secret_post',
    authRequestOptionalConfig: { prompt: 'login' },
    customConfig: { hd: 'example.org' },
  });

  it("takes Logto's OIDC connector shape: explicit endpoints, idTokenVerificationConfig, a scope without openid", async () => {
    const config = logtoShape();
    const created = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config, metadata: { target: target() } },
    });
    expectStatus(created, 200);
    const shown = created.body.config;
    expect(shown).to.deep.equal({ ...config, clientSecret: shown.clientSecret, trustUnverifiedEmail: false });
    expect(shown.clientSecret).to.not.equal(secret);

    // Logto's own values only: the authorization code flow, a query the callback page can read.
    for (const [key, value] of [
      ['responseType', 'token'],
      ['authRequestOptionalConfig', { responseMode: 'form_post' }],
    ] as const) {
      const refused = await service.api.post('connectors', {
        json: { connectorId: 'oidc', config: { ...config, [key]: value }, metadata: { target: target() } },
      });
      expectError(refused, 400, 'connector.invalid_config');
    }
  });

  it('refuses a connector whose identity provider does not answer, saying what failed', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const refusals = [
      {
        connectorId: 'oidc',
        config: { ...oidcConfig, issuer: `${nowhere}/oidc` },
        path: 'config.issuer',
        says: /discovery document \(http:\/\/127\.0\.0\.1:\d+\/oidc\/\.well-known\/openid-configuration\) gave no answer: the connection was refused/,
      },
      {
        // The service answers its discovery document at this address, naming its own issuer (127.0.0.1).
        connectorId: 'oidc',
        config: { ...oidcConfig, issuer: oidcConfig.issuer.replace('127.0.0.1', 'localhost') },
        path: 'config.issuer',
        says: /names another issuer/,
      },
      {
        connectorId: 'oidc',
        config: {
          ...logtoShape(),
          idTokenVerificationConfig: { jwksUri: `${oidcConfig.issuer}/no-keys-here` },
          tokenEndpoint: `${nowhere}/token`,
        },
        paths: ['config.tokenEndpoint', 'config.idTokenVerificationConfig.jwksUri'],
        says: /token endpoint \(http:\/\/127.0.0.1:\d+\/token\) gave no answer: the connection was refused; the key set .* answered 404/,
      },
      {
        connectorId: 'oauth2',
        config: { ...oauth2Config, userInfoEndpoint: 'https://idp.invalid/userinfo' },
        path: 'config.userInfoEndpoint',
        says: /userinfo endpoint \(https:\/\/idp\.invalid\/userinfo\) gave no answer/,
      },
    ];
    const before = (await service.api.get('connectors')).body.length;
    for (const { connectorId, config, path, paths, says } of refusals) {
      const refused = await service.api.post('connectors', {
        json: { connectorId, config, metadata: { target: target() } },
      });
      expectError(refused, 400, 'connector.invalid_config');
      expect(refused.body.message).to.match(/^The identity provider could not be reached: /);
      expect(refused.body.message).to.match(says);
      expect(refused.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal(paths ?? [path]);
      expect(JSON.stringify(refused.body)).to.not.include(secret);
    }
    expect((await service.api.get('connectors')).body).to.have.length(before);

    // A change to an address that does not answer is refused too, and the connector stays as it was.
    const created = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config: logtoShape(), metadata: { target: target() } },
    });
    expectStatus(created, 200);
    const patched = await service.api.patch(`connectors/${created.body.id}`, {
      json: { config: { tokenEndpoint: `${nowhere}/token` } },
    });
    expectError(patched, 400, 'connector.invalid_config');
    expect(patched.body.details[0].path).to.equal('config.tokenEndpoint');
    expect((await service.api.get(`connectors/${created.body.id}`)).body).to.deep.equal(created.body);

    // Addresses are checked when they are new: a secret is rotated while the IdP is down.
    const standIn = await startStandInIssuer();
    const down = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config: { ...oidcConfig, issuer: standIn.issuer }, metadata: { target: target() } },
    });
    expectStatus(down, 200);
    await standIn.close();
    expectStatus(
      await service.api.patch(`connectors/${down.body.id}`, {
        json: { config: { clientSecret: 'rotated-secret-0123' } },
      }),
      200,
    );
    expectError(
      await service.api.patch(`connectors/${down.body.id}`, { json: { config: { issuer: `${standIn.issuer}/` } } }),
      400,
      'connector.invalid_config',
    );
  });

  it('takes plain http only for a loopback IdP', async () => {
    for (const [connectorId, config, field] of [
      ['oidc', { ...oidcConfig, issuer: 'http://idp.example.com/oidc' }, 'config.issuer'],
      ['oauth2', { ...oauth2Config, tokenEndpoint: 'http://idp.example.com/token' }, 'config.tokenEndpoint'],
      ['oauth2', { ...oauth2Config, userInfoEndpoint: 'http://10.0.0.8/userinfo' }, 'config.userInfoEndpoint'],
    ] as const) {
      const refused = await service.api.post('connectors', {
        json: { connectorId, config, metadata: { target: target() } },
      });
      expectError(refused, 400, 'connector.invalid_config');
      expect(refused.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal([field]);
    }
    const { port } = new URL(service.url);
    for (const host of ['localhost', '127.0.0.1', '[::1]']) {
      const config = {
        ...oauth2Config,
        authorizationEndpoint: `http://${host}:${port}/oidc/auth`,
        tokenEndpoint: `http://${host}:${port}/oidc/token`,
        userInfoEndpoint: `http://${host}:${port}/oidc/me`,
      };
      const created = await service.api.post('connectors', {
        json: { connectorId: 'oauth2', config, metadata: { target: target() } },
      });
      expectStatus(created, 200);
    }
  });

  it('needs metadata.target, unique across connectors (422 on a duplicate)', async () => {
    expectError(
      await service.api.post('connectors', { json: { connectorId: 'oidc', config: oidcConfig } }),
      400,
      'connector.should_specify_target',
    );
    const shared = target();
    expectStatus(
      await service.api.post('connectors', {
        json: { connectorId: 'oidc', config: oidcConfig, metadata: { target: shared } },
      }),
      200,
    );
    expectError(
      await service.api.post('connectors', {
        json: { connectorId: 'oauth2', config: oauth2Config, metadata: { target: shared } },
      }),
      422,
      'connector.multiple_target_with_same_platform',
    );
    expectError(
      await service.api.post('connectors', {
        json: { connectorId: 'oidc', config: oidcConfig, metadata: { target: 'Not Valid!' } },
      }),
      400,
      'guard.invalid_input',
    );
  });

  it('concurrent creates of one target: one wins, the others get 422', async () => {
    const shared = target();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        service.api.post('connectors', {
          json: { connectorId: 'oidc', config: oidcConfig, metadata: { target: shared } },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses, JSON.stringify(responses.map((response) => response.body))).to.deep.equal([
      200, 422, 422, 422, 422, 422,
    ]);
  });

  it('answers bad input with 4xx and an error code, never 5xx', async () => {
    const bodies: unknown[] = [
      {},
      { connectorId: 'saml', config: {}, metadata: { target: target() } },
      { connectorId: 'oidc', config: 'text', metadata: { target: target() } },
      { connectorId: 'oidc', config: oidcConfig, metadata: { target: target(), unknown: 1 } },
      { connectorId: 'oidc', config: oidcConfig, metadata: { target: target() }, enableTokenStorage: true },
      { connectorId: 'oidc', config: { ...oidcConfig, clientSecret: '' }, metadata: { target: target() } },
      {
        connectorId: 'oidc',
        config: { ...oidcConfig, authorizationEndpoint: 'https://idp.example.com/auth' },
        metadata: { target: target() },
      },
      { connectorId: 'oauth2', config: { ...oauth2Config, profileMap: { id: '' } }, metadata: { target: target() } },
      { connectorId: 'oidc', config: oidcConfig, metadata: { target: target() }, id: 'x'.repeat(50) },
    ];
    for (const json of bodies) {
      const response = await service.api.post('connectors', { json });
      expect(response.statusCode, `${JSON.stringify(json)} → ${JSON.stringify(response.body)}`).to.be.within(400, 499);
      expect(response.body.code, JSON.stringify(json)).to.be.a('string');
    }
    const raw = await service.api.post('connectors', {
      body: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    expect(raw.statusCode).to.be.within(400, 499);
    expect((await service.api.get(`connectors/${'x'.repeat(40)}`)).statusCode).to.be.within(400, 499);
    expect((await service.http.get('api/connectors')).statusCode).to.equal(401);
  });

  it('works with the @logto/api client', async () => {
    const apiClient = logtoManagementClient(service);
    const created = await apiClient.POST('/api/connectors', {
      body: { connectorId: 'oidc', config: oidcConfig, metadata: { target: target() } },
    });
    expect(created.response.status, JSON.stringify(created.error)).to.equal(200);
    const read = await apiClient.GET('/api/connectors/{id}', { params: { path: { id: created.data!.id } } });
    expect(read.response.status).to.equal(200);
    expect(read.data!.config).to.include({ clientId: 'client-1' });
    expect(JSON.stringify(read.data)).to.not.include(secret);
    const removed = await apiClient.DELETE('/api/connectors/{id}', { params: { path: { id: created.data!.id } } });
    expect(removed.response.status).to.equal(204);
  });

  it('the public sign-in settings list the connectors by name, without configuration', async () => {
    const created = await service.api.post('connectors', {
      json: { connectorId: 'oidc', config: oidcConfig, metadata: { target: target(), name: { en: 'Listed' } } },
    });
    const settings = await service.http.get('api/.well-known/sign-in-exp');
    expectStatus(settings, 200);
    expect(settings.body.socialConnectors).to.deep.include({
      id: created.body.id,
      target: created.body.target,
      name: { en: 'Listed' },
      logo: '',
    });
    expect(JSON.stringify(settings.body)).to.not.include('client-1');
    expect(JSON.stringify(settings.body)).to.not.include(secret);
  });
});
