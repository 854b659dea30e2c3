import { expect } from 'chai';

import { createSpa, signInWithPassword } from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

const password = 'Correct-Horse-9';

/** Logto's `passwordExpiration`: an expired password signs in no more until a new one is set. */
describe('password expiration', () => {
  let service: TestService;
  let spa: { id: string };

  const setExpiration = (passwordExpiration: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    service.api.patch('sign-in-exp', { json: { passwordExpiration, ...extra } });
  const newUser = async () => {
    const created = await service.api.post('users', { json: { username: unique('aging'), password } });
    expectStatus(created, 200);
    return created.body as { id: string; username: string; updatedAt: number };
  };
  const signInAs = (username: string, secret = password) =>
    signInWithPassword(service, spa.id, { type: 'username', value: username }, secret);

  before(async () => {
    service = await startService();
    spa = await createSpa(service);
  });
  after(() => ifSet(service)?.stop());

  it('is off by default, and an administrator cannot expire a password then', async () => {
    expect((await service.api.get('sign-in-exp')).body.passwordExpiration).to.deep.equal({});
    const user = await newUser();
    expectError(
      await service.api.patch(`users/${user.id}/password/expiration`),
      400,
      'sign_in_experiences.password_expiration_not_enabled',
    );
    expectStatus(await signInAs(user.username), 200);
  });

  it('needs a forgot-password method to be turned on, and a whole number of days', async () => {
    expectError(
      await setExpiration({ enabled: true, validPeriodDays: 30 }, { forgotPasswordMethods: [] }),
      400,
      'sign_in_experiences.password_expiration_requires_forgot_password',
    );
    for (const passwordExpiration of [{ enabled: true }, { enabled: true, validPeriodDays: 0 }, { enabled: 'yes' }]) {
      expectError(await setExpiration(passwordExpiration), 400, 'guard.invalid_input');
    }
    expect((await service.api.get('sign-in-exp')).body.passwordExpiration).to.deep.equal({});
  });

  it('on, an expired password is refused at sign-in until a new one is set; older ones age from the switch', async () => {
    const before = await newUser();
    const turnedOn = await setExpiration({ enabled: true, validPeriodDays: 30 });
    expectStatus(turnedOn, 200);
    expect(turnedOn.body.passwordExpiration).to.include({ enabled: true, validPeriodDays: 30 });
    expect(turnedOn.body.passwordExpiration.enabledAt).to.be.a('number');
    // A password set before the policy is not expired by it.
    expectStatus(await signInAs(before.username), 200);

    const user = await newUser();
    const expired = await service.api.patch(`users/${user.id}/password/expiration`);
    expectStatus(expired, 200);
    expect(expired.body).to.include({ id: user.id, hasPassword: true });
    expect(expired.body.updatedAt).to.be.at.least(user.updatedAt);

    expectError(await signInAs(user.username), 422, 'password.expired');
    // A wrong password is still just wrong: the expiry is told only to whoever knows the password.
    expectError(await signInAs(user.username, 'Wrong-Horse-1'), 422, 'session.invalid_credentials');

    // Saving the settings again keeps when the policy began.
    const again = await setExpiration({ enabled: true, validPeriodDays: 60 });
    expect(again.body.passwordExpiration.enabledAt).to.equal(turnedOn.body.passwordExpiration.enabledAt);

    expectStatus(await service.api.patch(`users/${user.id}/password`, { json: { password: 'Fresh-Meadow-4' } }), 200);
    expectStatus(await signInAs(user.username, 'Fresh-Meadow-4'), 200);

    // Off again, an expired password signs in.
    const other = await newUser();
    expectStatus(await service.api.patch(`users/${other.id}/password/expiration`), 200);
    expectStatus(await setExpiration({ enabled: false }), 200);
    expectStatus(await signInAs(other.username), 200);
  });
});
