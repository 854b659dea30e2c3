import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';

/** `/api/sso-connectors`, `/api/sso-connector-providers` and `/api/organizations/:id/jit/sso-connectors`. */
describe('enterprise SSO connectors: the management API', () => {
  let service: TestService;
  const name = () => unique('Corp SSO ');
  const secret = 'sso-client-secret-0123456789';
  const config = { issuer: 'https://login.corp.example/oidc', clientId: 'sso-client', clientSecret: secret };

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  const create = (json: Record<string, unknown>) =>
    service.api.post('sso-connectors', { json: { providerName: 'OIDC', connectorName: name(), ...json } });

  it('lists the providers: OIDC', async () => {
    const providers = await service.api.get('sso-connector-providers');
    expectStatus(providers, 200);
    expect(providers.body.map((provider: { providerName: string }) => provider.providerName)).to.deep.equal(['OIDC']);
  });

  it('creates, reads, lists, updates and deletes a connector; the secret never shows', async () => {
    const created = await create({
      config,
      domains: ['Corp.Example', 'corp.example', 'subsidiary.example'],
      branding: { displayName: 'Corp' },
    });
    expectStatus(created, 200);
    const connector = created.body;
    expect(connector).to.include({
      providerName: 'OIDC',
      providerType: 'oidc',
      syncProfile: false,
      enableTokenStorage: false,
    });
    // Domains are lower-cased and kept once.
    expect(connector.domains).to.deep.equal(['corp.example', 'subsidiary.example']);
    expect(connector.config).to.include({ issuer: config.issuer, clientId: 'sso-client', trustUnverifiedEmail: false });
    expect(connector.config.clientSecret).to.be.a('string').and.not.equal(secret);
    expect(JSON.stringify(connector)).to.not.include(secret);
    expect(connector.createdAt).to.be.a('number');

    expect((await service.api.get(`sso-connectors/${connector.id}`)).body).to.deep.equal(connector);
    const listed = await service.api.get('sso-connectors');
    expectStatus(listed, 200);
    expect(listed.body.map((item: { id: string }) => item.id)).to.include(connector.id);
    expect(listed.headers['total-number']).to.equal(String(listed.body.length));
    expect(JSON.stringify(listed.body)).to.not.include(secret);
    const page = await service.api.get('sso-connectors', { searchParams: { page: 1, page_size: 1 } });
    expect(page.body).to.have.length(1);

    // A masked secret sent back keeps the stored one; omitted config keys are kept.
    const patched = await service.api.patch(`sso-connectors/${connector.id}`, {
      json: {
        config: { clientSecret: connector.config.clientSecret, scope: 'groups' },
        domains: ['corp.example'],
        syncProfile: true,
      },
    });
    expectStatus(patched, 200);
    expect(patched.body.config).to.include({
      issuer: config.issuer,
      clientSecret: connector.config.clientSecret,
      scope: 'groups',
    });
    expect(patched.body).to.include({ syncProfile: true });
    expect(patched.body.domains).to.deep.equal(['corp.example']);
    expect(patched.body.branding).to.deep.equal({ displayName: 'Corp' });

    expectStatus(await service.api.delete(`sso-connectors/${connector.id}`), 204);
    expectError(await service.api.get(`sso-connectors/${connector.id}`), 404, 'entity.not_exists_with_id');
    expectError(await service.api.delete(`sso-connectors/${connector.id}`), 404, 'entity.not_exists_with_id');
    expectError(
      await service.api.patch(`sso-connectors/${connector.id}`, { json: { syncProfile: false } }),
      404,
      'entity.not_exists_with_id',
    );
  });

  it('a connector may be created before it is configured', async () => {
    const created = await create({});
    expectStatus(created, 200);
    expect(created.body.config).to.deep.equal({});
    expect(created.body.domains).to.deep.equal([]);
  });

  it('refuses an invalid configuration with 400 connector.invalid_config and what is wrong', async () => {
    const invalid = await create({ config: { issuer: 'nope', clientSecret: '' } });
    expectError(invalid, 400, 'connector.invalid_config');
    expect(invalid.body.details.map((detail: { path: string }) => detail.path)).to.include.members([
      'config.issuer',
      'config.clientId',
      'config.clientSecret',
    ]);
    const http = await create({ config: { ...config, issuer: 'http://login.corp.example/oidc' } });
    expectError(http, 400, 'connector.invalid_config');
    expect(http.body.details.map((detail: { path: string }) => detail.path)).to.deep.equal(['config.issuer']);

    const unconfigured = (await create({})).body;
    const patched = await service.api.patch(`sso-connectors/${unconfigured.id}`, {
      json: { config: { issuer: config.issuer } },
    });
    expectError(patched, 400, 'connector.invalid_config');
    expect(patched.body.details.map((detail: { path: string }) => detail.path)).to.include.members([
      'config.clientId',
      'config.clientSecret',
    ]);
  });

  it('connector names are unique: 409 on create and on rename', async () => {
    const taken = name();
    expectStatus(
      await service.api.post('sso-connectors', { json: { providerName: 'OIDC', connectorName: taken } }),
      200,
    );
    expectError(
      await service.api.post('sso-connectors', { json: { providerName: 'OIDC', connectorName: taken } }),
      409,
      'single_sign_on.duplicate_connector_name',
    );
    const other = (await create({})).body;
    expectError(
      await service.api.patch(`sso-connectors/${other.id}`, { json: { connectorName: taken } }),
      409,
      'single_sign_on.duplicate_connector_name',
    );
    // Its own name is no conflict.
    expectStatus(
      await service.api.patch(`sso-connectors/${other.id}`, { json: { connectorName: other.connectorName } }),
      200,
    );
  });

  it('concurrent creates of one name: one wins, the others get 409', async () => {
    const taken = name();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        service.api.post('sso-connectors', { json: { providerName: 'OIDC', connectorName: taken } }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses, JSON.stringify(responses.map((response) => response.body))).to.deep.equal([
      200, 409, 409, 409, 409, 409,
    ]);
  });

  it('takes a domain with an underscore, as Logto does (sso_example.com), for a connector and a JIT email domain', async () => {
    const created = await service.api.post('sso-connectors', {
      json: { providerName: 'OIDC', connectorName: name(), domains: ['sso_example.com', 'Corp-1.Example'] },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
    expect(created.body.domains).to.deep.equal(['sso_example.com', 'corp-1.example']);
    const organization = await service.api.post('organizations', { json: { name: name() } });
    const added = await service.api.post(`organizations/${organization.body.id}/jit/email-domains`, {
      json: { emailDomain: 'sso_example.com' },
    });
    expect(added.statusCode, JSON.stringify(added.body)).to.equal(201);
    for (const emailDomain of ['-corp.example', 'corp', 'corp..example', 'a b.example']) {
      const refused = await service.api.post(`organizations/${organization.body.id}/jit/email-domains`, {
        json: { emailDomain },
      });
      expect(refused.statusCode, emailDomain).to.equal(400);
    }
  });

  it('answers bad input with 4xx and an error code, never 5xx', async () => {
    const bodies: unknown[] = [
      {},
      { providerName: 'SAML', connectorName: name() },
      { providerName: 'OIDC', connectorName: '' },
      { providerName: 'OIDC', connectorName: name(), domains: ['not a domain'] },
      { providerName: 'OIDC', connectorName: name(), domains: 'corp.example' },
      { providerName: 'OIDC', connectorName: name(), config: 'text' },
      { providerName: 'OIDC', connectorName: name(), branding: { color: 'red' } },
      { providerName: 'OIDC', connectorName: name(), config: { ...config, trustUnverifiedEmail: 'yes' } },
      { providerName: 'OIDC', connectorName: 'x'.repeat(200) },
    ];
    for (const json of bodies) {
      const response = await service.api.post('sso-connectors', { json });
      expect(response.statusCode, `${JSON.stringify(json)} → ${JSON.stringify(response.body)}`).to.be.within(400, 499);
      expect(response.body.code).to.be.a('string');
    }
    expect((await service.api.get('sso-connectors', { searchParams: { page: 0 } })).statusCode).to.equal(400);
    expect((await service.http.get('api/sso-connectors')).statusCode).to.equal(401);
  });

  it('works with the @logto/api client', async () => {
    const apiClient = logtoManagementClient(service);
    const created = await apiClient.POST('/api/sso-connectors', {
      body: { providerName: 'OIDC', connectorName: name(), config, domains: ['logto-client.example'] },
    });
    expect(created.response.status, JSON.stringify(created.error)).to.equal(200);
    const read = await apiClient.GET('/api/sso-connectors/{id}', { params: { path: { id: created.data!.id } } });
    expect(read.response.status).to.equal(200);
    expect(read.data!.domains).to.deep.equal(['logto-client.example']);
    expect(JSON.stringify(read.data)).to.not.include(secret);
    expect(
      (await apiClient.DELETE('/api/sso-connectors/{id}', { params: { path: { id: created.data!.id } } })).response
        .status,
    ).to.equal(204);
  });

  it('organizations admit SSO connectors just in time: GET/POST/PUT/DELETE jit/sso-connectors', async () => {
    const organization = (await service.api.post('organizations', { json: { name: `jit-sso-${Date.now()}` } })).body;
    const first = (await create({ config })).body;
    const second = (await create({})).body;
    const path = `organizations/${organization.id}/jit/sso-connectors`;

    expect((await service.api.get(path)).body).to.deep.equal([]);
    expectStatus(await service.api.post(path, { json: { ssoConnectorIds: [first.id] } }), 201);
    // Adding one that is there already is no error.
    expectStatus(await service.api.post(path, { json: { ssoConnectorIds: [first.id, second.id] } }), 201);
    const listed = await service.api.get(path);
    expectStatus(listed, 200);
    expect(listed.body.map((connector: { id: string }) => connector.id).sort()).to.deep.equal(
      [first.id, second.id].sort(),
    );
    expect(listed.headers['total-number']).to.equal('2');
    expect(JSON.stringify(listed.body)).to.not.include(secret);

    expectStatus(await service.api.put(path, { json: { ssoConnectorIds: [second.id] } }), 204);
    expect((await service.api.get(path)).body.map((connector: { id: string }) => connector.id)).to.deep.equal([
      second.id,
    ]);
    expectStatus(await service.api.delete(`${path}/${second.id}`), 204);
    expectError(await service.api.delete(`${path}/${second.id}`), 404, 'entity.not_exists_with_id');
    expectStatus(await service.api.put(path, { json: { ssoConnectorIds: [first.id] } }), 204);

    expectError(
      await service.api.post(path, { json: { ssoConnectorIds: ['no-such-connector'] } }),
      422,
      'entity.relation_foreign_key_not_found',
    );
    expectError(
      await service.api.put(path, { json: { ssoConnectorIds: ['no-such-connector'] } }),
      422,
      'entity.relation_foreign_key_not_found',
    );
    expectError(await service.api.post(path, { json: { ssoConnectorIds: [] } }), 400, 'guard.invalid_input');
    expectError(await service.api.post(path, { json: {} }), 400, 'guard.invalid_input');
    for (const call of [
      service.api.get('organizations/no-such-org/jit/sso-connectors'),
      service.api.post('organizations/no-such-org/jit/sso-connectors', { json: { ssoConnectorIds: [first.id] } }),
      service.api.put('organizations/no-such-org/jit/sso-connectors', { json: { ssoConnectorIds: [] } }),
      service.api.delete(`organizations/no-such-org/jit/sso-connectors/${first.id}`),
    ]) {
      expectError(await call, 404, 'entity.not_exists_with_id');
    }

    // Deleting the connector takes it out of the organization's settings.
    expectStatus(await service.api.delete(`sso-connectors/${first.id}`), 204);
    expect((await service.api.get(path)).body).to.deep.equal([]);
  });
});
