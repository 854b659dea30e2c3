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

    // What the client was answered, as the operator reads it.
    const lines = refusals().map(({ error, description, grantType }) => ({ error, description, grantType }));
    expect(lines).to.deep.include.members([
      { error: 'invalid_client', description: refused.body.error_description, grantType: 'client_credentials' },
      { error: badCode.body.error, description: badCode.body.error_description, grantType: 'authorization_code' },
    ]);
    expect(refusals().at(-1)).to.include({ clientId: application.id });
    const log = service.logs();
    expect(log).to.not.include(wrongSecret);
    expect(log).to.not.include(application.secret);
    expect(log).to.not.include(code);
  });
});
