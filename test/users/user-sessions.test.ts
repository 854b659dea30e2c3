import { expect } from 'chai';

import {
  createUser,
  type SignInSetting,
  signInWithPassword,
  startSignInSetting,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import type { TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

const password = 'Granite-Kestrel-64';
type Session = {
  payload: { uid: string; accountId: string; authorizations: Record<string, { grantId?: string }> } & Record<
    string,
    unknown
  >;
  accountId: string;
  lastSubmission: unknown;
  clientId: string | null;
  expiresAt: number;
};

/** Logto's `GET|DELETE /api/users/:userId/sessions[/:sessionId]`: a person's sessions, ended one by one. */
describe('management API: a user’s sessions', () => {
  let setting: SignInSetting;
  let service: TestService;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, spa } = setting);
  });
  after(() => ifSet(setting)?.stop());

  async function signedInTwice(): Promise<{ id: string; username: string }> {
    const username = unique('sessions');
    const user = await createUser(service, { username, password });
    for (let time = 0; time < 2; time++) {
      expectStatus(await signInWithPassword(service, spa.id, { type: 'username', value: username }, password), 200);
    }
    return { id: user.id, username };
  }
  const sessionsOf = async (userId: string) =>
    (await service.api.get<{ sessions: Session[] }>(`users/${userId}/sessions`)).body.sessions;
  const grantsOf = async (userId: string) =>
    (await service.api.get<{ grants: unknown[] }>(`users/${userId}/grants`)).body.grants;

  it('lists each sign-in’s session in Logto’s shape, never the session’s id (the cookie’s value)', async () => {
    const user = await signedInTwice();
    const sessions = await sessionsOf(user.id);
    expect(sessions).to.have.length(2);
    for (const session of sessions) {
      expect(session).to.include({ accountId: user.id, clientId: spa.id, lastSubmission: null });
      expect(session.expiresAt).to.be.greaterThan(Date.now());
      expect(session).not.to.have.any.keys('id', 'tenantId', 'consumedAt', 'isCurrent');
      expect(session.payload).not.to.have.property('jti');
      expect(session.payload.accountId).to.equal(user.id);
      expect(session.payload.authorizations).to.have.property(spa.id);
      const one = await service.api.get<Session>(`users/${user.id}/sessions/${session.payload.uid}`);
      expectStatus(one, 200);
      expect(one.body).to.deep.equal(session);
    }
  });

  it('ends one session, keeping the grants, or with revokeGrantsTarget=all the grants it made too', async () => {
    const user = await signedInTwice();
    const [first, second] = await sessionsOf(user.id);
    const grants = (await grantsOf(user.id)).length;
    expect(grants).to.be.greaterThan(0);

    expectStatus(await service.api.delete(`users/${user.id}/sessions/${first.payload.uid}`), 204);
    expect((await sessionsOf(user.id)).map(({ payload }) => payload.uid)).to.deep.equal([second.payload.uid]);
    expect(await grantsOf(user.id)).to.have.length(grants);

    expectStatus(
      await service.api.delete(`users/${user.id}/sessions/${second.payload.uid}`, {
        searchParams: { revokeGrantsTarget: 'all' },
      }),
      204,
    );
    expect(await sessionsOf(user.id)).to.deep.equal([]);
    expect((await grantsOf(user.id)).length).to.be.lessThan(grants);
  });

  it('answers 404 oidc.session_not_found for an unknown session or another user’s', async () => {
    const user = await signedInTwice();
    const other = await signedInTwice();
    const [theirs] = await sessionsOf(other.id);
    expectError(await service.api.get(`users/${user.id}/sessions/no-such-session`), 404, 'oidc.session_not_found');
    expectError(
      await service.api.get(`users/${user.id}/sessions/${theirs.payload.uid}`),
      404,
      'oidc.session_not_found',
    );
    expectError(
      await service.api.delete(`users/${user.id}/sessions/${theirs.payload.uid}`),
      404,
      'oidc.session_not_found',
    );
    expect(await sessionsOf(other.id)).to.have.length(2);
  });
});
