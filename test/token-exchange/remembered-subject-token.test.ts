import { expect } from 'chai';

import { startService, type TestService } from '../support/service.ts';
import {
  accessTokenType,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  userWithApiBRole,
} from './support.ts';

/**
 * API A exchanges one user token for each of its downstream calls, so the service remembers what the
 * first verification found (issue #33). What may change under a remembered token must still refuse it
 * at the very next exchange: its revocation, its user's suspension, its user's deletion.
 */
describe('token exchange: a remembered subject token is still refused at once', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
  });
  after(() => service.stop());

  /** A user holding API B's role, and a JWT access token for API A that API A's backend exchanged three times. */
  async function exchangedUser() {
    const { id, token } = await userWithApiBRole(service, setup);
    for (let call = 0; call < 3; call += 1) {
      expectIssued(await exchangeOf(token));
    }
    return { id, token };
  }

  const exchangeOf = (token: string) =>
    exchange(service, setup.backend, {
      subject_token: token,
      subject_token_type: accessTokenType,
      resource: setup.apiB.resource.indicator,
      scope: 'read:b',
    });

  it('refuses it once the front end revoked it', async () => {
    const { token } = await exchangedUser();
    const revocation = await service.http.post('oidc/token/revocation', {
      form: { token, token_type_hint: 'access_token', client_id: setup.frontend.id },
    });
    expect(revocation.statusCode, JSON.stringify(revocation.body)).to.equal(200);
    expectOAuthError(await exchangeOf(token), 400, 'invalid_request', /revoked/i);
  });

  it('refuses it once its user is suspended, and takes it again after reactivation', async () => {
    const { id, token } = await exchangedUser();
    const suspend = (isSuspended: boolean) => service.api.patch(`users/${id}/is-suspended`, { json: { isSuspended } });
    expect((await suspend(true)).statusCode).to.equal(200);
    expectOAuthError(await exchangeOf(token), 400, 'invalid_request', /suspended/);
    expect((await suspend(false)).statusCode).to.equal(200);
    expectIssued(await exchangeOf(token));
  });

  it('refuses it once its user is deleted', async () => {
    const { id, token } = await exchangedUser();
    expect((await service.api.delete(`users/${id}`)).statusCode).to.equal(204);
    expectOAuthError(await exchangeOf(token), 400, 'invalid_request', /deleted/);
  });
});
