import { expect } from 'chai';

import { createMachineWithScopes, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';

/** An operator sees why a token request was refused: the OAuth error and its description, never a secret. */
describe('refused token requests in the log', () => {
  let service: TestService;
  before(async () => {
    service = await startService({ logs: true });
  });
  after(() => service.stop());

  const refusals = () =>
    service
      .logs()
      .split('\n')
      .filter((line) => line.includes('token request refused'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('logs each refusal with its error, description, grant type and client, without the secret or the code', async () => {
    const { resource, scopeIds } = await createResource(service, ['read']);
    const { application } = await createMachineWithScopes(service, [scopeIds.read]);
    const wrongSecret = 'not-the-secret-b7f1c2';
    const refused = await service.token(application.id, wrongSecret, {
      grant_type: 'client_credentials',
      resource: resource.indicator,
    });
    expect(refused.statusCode).to.equal(401);
    const code = 'a-made-up-authorization-code-9f3e';
    const badCode = await service.token(application.id, application.secret, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://app.test/callback',
    });
    expect(badCode.statusCode).to.equal(400);

    const lines = refusals();
    expect(lines.map(({ error, grantType, clientId }) => ({ error, grantType, clientId }))).to.deep.include.members([
      { error: 'invalid_client', grantType: 'client_credentials', clientId: application.id },
      { error: 'unauthorized_client', grantType: 'authorization_code', clientId: application.id },
    ]);
    for (const line of lines) {
      expect(line.description).to.be.a('string');
    }
    const log = service.logs();
    expect(log).to.not.include(wrongSecret);
    expect(log).to.not.include(application.secret);
    expect(log).to.not.include(code);
  });
});
