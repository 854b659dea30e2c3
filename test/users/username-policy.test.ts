import { expect } from 'chai';

import { openExperience, signInWithPassword } from '../experience/experience-helpers.ts';
import { accountApi } from '../support/account-api.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';
import { ifSet, unique } from '../support/values.ts';

const redirectUri = 'http://app.test/callback';
const password = 'Correct-Horse-9';
const defaultPolicy = {
  caseSensitive: true,
  minLength: 1,
  maxLength: 128,
  allowedChars: { lowercase: true, uppercase: true, numbers: true, underscore: true },
};

/** Logto's `usernamePolicy`: usernames that differ by case or not, and what people may choose. */
describe('username policy: case sensitivity and what a username may hold', () => {
  let service: TestService;
  let spa: { id: string };

  const setPolicy = (usernamePolicy: Record<string, unknown>) =>
    service.api.patch('sign-in-exp', { json: { usernamePolicy } });
  const createUser = (username: string) => service.api.post('users', { json: { username, password } });
  const conflicts = async () => (await service.api.get('sign-in-exp/username-policy/case-sensitivity-conflicts')).body;

  before(async () => {
    service = await startService();
    spa = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
  });
  after(() => ifSet(service)?.stop());
  afterEach(async () => {
    expectStatus(await setPolicy(defaultPolicy), 200);
  });

  it('is case-sensitive by default, and lists the usernames that differ only by case', async () => {
    expect((await service.api.get('sign-in-exp')).body.usernamePolicy).to.deep.equal(defaultPolicy);
    const base = unique('casey');
    const lower = await createUser(base.toLowerCase());
    const upper = await createUser(base.toUpperCase());
    expectStatus(lower, 200);
    expectStatus(upper, 200);
    // Neither is `Casey…`: a spelling of another case signs no one in.
    const wrongCase = await signInWithPassword(
      service,
      spa.id,
      { type: 'username', value: `${base.charAt(0).toUpperCase()}${base.slice(1).toLowerCase()}` },
      password,
    );
    expectError(wrongCase, 422, 'session.invalid_credentials');

    const listed = await conflicts();
    expect(listed.totalConflicts).to.equal(1);
    expect(listed.samples).to.deep.equal([
      { usernameLower: base.toLowerCase(), userIds: [lower.body.id, upper.body.id] },
    ]);

    // While they exist, usernames cannot stop differing by case.
    expectError(
      await setPolicy({ ...defaultPolicy, caseSensitive: false }),
      409,
      'sign_in_experiences.username_policy_case_conflicts_exist',
    );
    expect((await service.api.get('sign-in-exp')).body.usernamePolicy.caseSensitive).to.equal(true);
    expectStatus(await service.api.delete(`users/${upper.body.id}`), 204);
    expect((await conflicts()).totalConflicts).to.equal(0);
    expectStatus(await setPolicy({ ...defaultPolicy, caseSensitive: false }), 200);
  });

  it('case-insensitive: one username whatever its case, found whatever its case', async () => {
    expectStatus(await setPolicy({ ...defaultPolicy, caseSensitive: false }), 200);
    const base = unique('robin');
    const first = await createUser(base.toLowerCase());
    expectStatus(first, 200);
    expectError(await createUser(base.toUpperCase()), 422, 'user.username_already_in_use');
    const other = await createUser(unique('other'));
    expectError(
      await service.api.patch(`users/${other.body.id}`, { json: { username: base.toUpperCase() } }),
      422,
      'user.username_already_in_use',
    );
    // A person may change the case of their own username.
    expectStatus(await service.api.patch(`users/${first.body.id}`, { json: { username: base.toUpperCase() } }), 200);
    // And signs in with any case of it.
    const signedIn = await signInWithPassword(
      service,
      spa.id,
      { type: 'username', value: base.toLowerCase() },
      password,
    );
    expectStatus(signedIn, 200);
    // At sign-up, a name taken in another case is taken.
    const browser = await openExperience(service, spa.id, 'Register');
    expectError(
      await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: base.toLowerCase() },
        password,
      }),
      422,
      'user.username_already_in_use',
    );
  });

  it('binds what people choose at sign-up and in the Account API, not what administrators set', async () => {
    expectStatus(
      await setPolicy({
        ...defaultPolicy,
        minLength: 4,
        allowedChars: { lowercase: true, uppercase: false, numbers: true, underscore: true },
      }),
      200,
    );
    const browser = await openExperience(service, spa.id, 'Register');
    const propose = (value: string) =>
      browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value },
        password,
      });
    expectError(await propose(`A${unique('up')}`), 422, 'user.username_uppercase_not_allowed');
    expectError(await propose('abc'), 422, 'user.username_too_short');
    expectStatus(await propose(unique('fine')), 200);

    // An administrator's write keeps only the always-on rule.
    const admin = unique('Admin');
    expectStatus(await createUser(admin), 200);
    expectStatus(await createUser('abc'), 200);

    const tokens = await signIn(
      service,
      { clientId: spa.id, redirectUri },
      { username: admin, password },
      { scope: 'openid profile' },
    );
    const call = accountApi(service, tokens.access_token);
    const proof = (await call('post', 'verifications/password', { password })).body.verificationRecordId;
    expectError(
      await call('patch', 'my-account', { username: `B${unique('up')}` }, proof),
      422,
      'user.username_uppercase_not_allowed',
    );
    expectStatus(await call('patch', 'my-account', { username: unique('lower') }, proof), 200);
  });

  it('refuses a policy that cannot be met with 400, and changes nothing', async () => {
    for (const usernamePolicy of [
      { ...defaultPolicy, minLength: 10, maxLength: 5 },
      { ...defaultPolicy, allowedChars: { lowercase: false, uppercase: false, numbers: true, underscore: false } },
      { ...defaultPolicy, maxLength: 129 },
      { caseSensitive: false },
    ]) {
      expectError(await setPolicy(usernamePolicy), 400, 'guard.invalid_input');
    }
    expect((await service.api.get('sign-in-exp')).body.usernamePolicy).to.deep.equal(defaultPolicy);
    expectError(
      await service.api.get('sign-in-exp/username-policy/case-sensitivity-conflicts', { searchParams: { limit: 0 } }),
      400,
      'guard.invalid_input',
    );
  });
});
