import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { createApplication } from '../support/fixtures.ts';
import { adminClient, startService, type TestService } from '../support/service.ts';

type Application = { id: string; secret: string };
type Resource = { id: string; indicator: string };

describe('management API: authentication', () => {
  let service: TestService;
  /** A machine-to-machine application holding no role at all. */
  let roleless: Application;
  /** A machine-to-machine application whose role grants `read:other` on another API resource. */
  let other: { application: Application; resource: Resource };

  /** A client credentials access token, asserting that the token endpoint issued one. */
  async function accessToken(application: Application, resource: string, scope: string): Promise<string> {
    const response = await service.token(application.id, application.secret, {
      grant_type: 'client_credentials',
      resource,
      scope,
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return String(response.body.access_token);
  }

  /** GET /api/applications with the given Authorization header (or none). */
  const listApplications = (authorization?: string) =>
    service.http.get('api/applications', { headers: authorization === undefined ? {} : { authorization } });

  async function post<T>(path: string, json: Record<string, unknown>): Promise<T> {
    const response = await service.api.post<T>(path, { json });
    expect(response.statusCode, `${path}: ${JSON.stringify(response.body)}`).to.be.oneOf([200, 201]);
    return response.body;
  }

  before(async () => {
    service = await startService();
    roleless = await createApplication(service, 'MachineToMachine');

    const resource = await post<Resource>('resources', { name: 'Other API', indicator: 'https://other.example.com' });
    const scope = await post<{ id: string }>(`resources/${resource.id}/scopes`, { name: 'read:other' });
    const role = await post<{ id: string }>('roles', {
      name: 'Other reader',
      description: 'Reads the other API.',
      type: 'MachineToMachine',
      scopeIds: [scope.id],
    });
    const application = await createApplication(service, 'MachineToMachine');
    await post(`applications/${application.id}/roles`, { roleIds: [role.id] });
    other = { application, resource };
  });
  after(() => service.stop());

  describe('the management API front door', () => {
    it('answers 401 auth.authorization_header_missing without an Authorization header', async () => {
      const response = await listApplications();
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ code: 'auth.authorization_header_missing' });
    });

    it('answers 401 to a Basic Authorization header', async () => {
      const response = await listApplications('Basic abc');
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ code: 'auth.authorization_token_type_not_supported' });
    });

    it('answers 401 auth.unauthorized to a Bearer token that is not a JWT', async () => {
      const response = await listApplications('Bearer garbage');
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ code: 'auth.unauthorized' });
    });

    it('answers 401 auth.unauthorized to a valid token for another API resource', async () => {
      const token = await accessToken(other.application, other.resource.indicator, 'read:other');
      expect(decodeJwt(token)).to.include({ aud: other.resource.indicator, scope: 'read:other' });

      const response = await listApplications(`Bearer ${token}`);
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ code: 'auth.unauthorized' });
    });

    it('answers 403 auth.forbidden to a management API token without the `all` scope', async () => {
      const token = await accessToken(roleless, service.config.managementApiResource, 'all');
      expect(decodeJwt(token)).to.include({ aud: service.config.managementApiResource, scope: '' });

      const response = await listApplications(`Bearer ${token}`);
      expect(response.statusCode).to.equal(403);
      expect(response.body).to.include({ code: 'auth.forbidden' });
    });

    it('answers 401 auth.unauthorized to a management API token whose signature was tampered with', async () => {
      const token = await accessToken(adminClient, service.config.managementApiResource, 'all');
      expect((await listApplications(`Bearer ${token}`)).statusCode, 'the untouched token').to.equal(200);

      const [header, payload, signature] = token.split('.');
      const middle = Math.floor(signature.length / 2);
      const flipped = signature[middle] === 'A' ? 'B' : 'A';
      const tampered = [header, payload, `${signature.slice(0, middle)}${flipped}${signature.slice(middle + 1)}`].join(
        '.',
      );

      const response = await listApplications(`Bearer ${tampered}`);
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ code: 'auth.unauthorized' });
    });

    it('serves GET /api/status without a token', async () => {
      const response = await service.http.get('api/status');
      expect(response.statusCode).to.equal(204);
    });

    it('serves GET /api/swagger.json without a token', async () => {
      const response = await service.http.get<{ openapi: string; paths: Record<string, unknown> }>('api/swagger.json');
      expect(response.statusCode).to.equal(200);
      expect(response.headers['content-type']).to.match(/^application\/json/);
      expect(response.body.openapi).to.match(/^3\./);
      expect(response.body.paths).to.have.property('/api/roles');
    });
  });

  describe('client authentication at the token endpoint', () => {
    it('answers 401 invalid_client with a WWW-Authenticate header to a wrong secret', async () => {
      const response = await service.token(roleless.id, 'not-the-secret', {
        grant_type: 'client_credentials',
        resource: service.config.managementApiResource,
      });
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ error: 'invalid_client' });
      expect(response.headers['www-authenticate'])
        .to.be.a('string')
        .and.match(/^Basic /i);
    });

    it('answers 400 invalid_target to an unknown resource indicator', async () => {
      const response = await service.token(other.application.id, other.application.secret, {
        grant_type: 'client_credentials',
        resource: 'https://unknown.example.com',
        scope: 'read:other',
      });
      expect(response.statusCode).to.equal(400);
      expect(response.body).to.include({ error: 'invalid_target' });
    });

    it('accepts client_secret_post: client_id and client_secret in the form, no Basic header', async () => {
      const response = await service.http.post<Record<string, unknown>>('oidc/token', {
        form: {
          grant_type: 'client_credentials',
          client_id: other.application.id,
          client_secret: other.application.secret,
          resource: other.resource.indicator,
          scope: 'read:other',
        },
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      expect(response.body.token_type).to.equal('Bearer');
      expect(decodeJwt(String(response.body.access_token))).to.include({
        aud: other.resource.indicator,
        client_id: other.application.id,
        scope: 'read:other',
      });
    });
  });
});
