import { expect } from 'chai';

import { type SignInSetting, startSignInSetting } from '../experience/experience-helpers.ts';
import { accountApi } from '../support/account-api.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import type { TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';
import { ifSet, unique } from '../support/values.ts';

const redirectUri = 'http://app.test/callback';
const password = 'Correct-Horse-9';
const sessionsScope = 'urn:logto:scope:sessions';

/** Logto's Account API beyond email, phone and password: what a token's scopes show and let a person change. */
describe('Account API: profile, custom data, settings and sessions by scope', () => {
  let setting: SignInSetting;
  let service: TestService;

  before(async () => {
    setting = await startSignInSetting();
    ({ service } = setting);
  });
  after(() => ifSet(setting)?.stop());

  /** A new user (username and password, plus `extra`) signed in with `scope`: their id and Account API. */
  async function signedIn(scope: string, extra: Record<string, unknown> = {}) {
    const username = unique('me');
    const created = await service.api.post('users', { json: { username, password, ...extra } });
    expectStatus(created, 200);
    const tokens = await signIn(service, { clientId: setting.spa.id, redirectUri }, { username, password }, { scope });
    const call = accountApi(service, tokens.access_token);
    const proof = async () => {
      const made = await call('post', 'verifications/password', { password });
      expectStatus(made, 201);
      return String(made.body.verificationRecordId);
    };
    return { id: String(created.body.id), username, call, proof, token: tokens.access_token };
  }

  describe('GET /my-account', () => {
    it('shows the basic profile with `profile`, and each other part only with its scope', async () => {
      const basic = await signedIn('openid profile', { primaryEmail: `${unique('e')}@example.com` });
      const plain = await basic.call('get', 'my-account');
      expectStatus(plain, 200);
      expect(plain.body).to.include({ id: basic.id, username: basic.username, hasPassword: true });
      for (const hidden of ['customData', 'identities', 'ssoIdentities', 'primaryEmail', 'primaryPhone']) {
        expect(plain.body).to.not.have.property(hidden);
      }

      const full = await signedIn('openid profile email phone custom_data identities', {
        customData: { plan: 'pro' },
      });
      const all = await full.call('get', 'my-account');
      expectStatus(all, 200);
      expect(all.body).to.deep.include({ customData: { plan: 'pro' }, identities: {}, ssoIdentities: [] });
      expect(all.body).to.include({ primaryEmail: null, primaryPhone: null });
    });

    it('gives userinfo the custom data, identities and roles the scopes ask for', async () => {
      const role = await service.api.post('roles', { json: { name: unique('role'), description: 'r' } });
      expectStatus(role, 200);
      const username = unique('claims');
      const user = await service.api.post('users', { json: { username, password, customData: { tier: 2 } } });
      expectStatus(await service.api.post(`users/${user.body.id}/roles`, { json: { roleIds: [role.body.id] } }), 201);
      const tokens = await signIn(
        service,
        { clientId: setting.spa.id, redirectUri },
        { username, password },
        { scope: 'openid custom_data identities roles' },
      );
      const claims = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expectStatus(claims, 200);
      expect(claims.body).to.deep.include({
        custom_data: { tier: 2 },
        identities: {},
        sso_identities: [],
        roles: [role.body.name],
      });
    });
  });

  describe('PATCH /my-account', () => {
    it('changes the name and avatar and tells webhooks (User.Data.Updated)', async () => {
      const { call } = await signedIn('openid profile');
      const { result, payloads } = await setting.events.expect(['User.Data.Updated'], () =>
        call('patch', 'my-account', { name: 'Ada Lovelace', avatar: 'https://example.com/ada.png' }),
      );
      expectStatus(result, 200);
      expect(result.body).to.include({ name: 'Ada Lovelace', avatar: 'https://example.com/ada.png' });
      expect(payloads['User.Data.Updated'][0].data).to.include({ name: 'Ada Lovelace' });
      expect((await call('get', 'my-account')).body).to.include({ name: 'Ada Lovelace' });
    });

    it('changes the username only with a proof, refuses a taken one and keeps a way to sign in', async () => {
      const other = await signedIn('openid profile');
      const me = await signedIn('openid profile');
      const newName = unique('renamed');
      expectError(
        await me.call('patch', 'my-account', { username: newName }),
        401,
        'verification_record.permission_denied',
      );
      expectError(
        await me.call('patch', 'my-account', { username: newName }, 'no-such-proof'),
        401,
        'verification_record.permission_denied',
      );
      const proof = await me.proof();
      expectError(
        await me.call('patch', 'my-account', { username: other.username }, proof),
        422,
        'user.username_already_in_use',
      );
      const renamed = await me.call('patch', 'my-account', { username: newName }, proof);
      expectStatus(renamed, 200);
      expect(renamed.body).to.include({ username: newName });
      // The username was the only way to sign in: it stays.
      expectError(
        await me.call('patch', 'my-account', { username: null }, proof),
        400,
        'user.last_sign_in_method_required',
      );
      expect((await service.api.get(`users/${me.id}`)).body).to.include({ username: newName });
      // The new name signs in.
      await signIn(
        service,
        { clientId: setting.spa.id, redirectUri },
        { username: newName, password },
        { scope: 'openid' },
      );
    });

    it('drops the username when an email remains', async () => {
      const me = await signedIn('openid profile', { primaryEmail: `${unique('keep')}@example.com` });
      const dropped = await me.call('patch', 'my-account', { username: null }, await me.proof());
      expectStatus(dropped, 200);
      expect(dropped.body).to.include({ username: null });
    });

    it('keeps one way to sign in when the username and the email are removed at once', async () => {
      const me = await signedIn('openid profile email', { primaryEmail: `${unique('both')}@example.com` });
      const proof = await me.proof();
      const answers = await Promise.all([
        me.call('patch', 'my-account', { username: null }, proof),
        me.call('delete', 'my-account/primary-email', undefined, proof),
      ]);
      // One wins (PATCH answers 200, DELETE 204); the other finds it would leave no way in.
      const refused = answers.filter(({ statusCode }) => statusCode === 400);
      expect(refused, JSON.stringify(answers.map(({ statusCode }) => statusCode))).to.have.length(1);
      expect(refused[0].body.code).to.equal('user.last_sign_in_method_required');
      expect(answers.filter(({ statusCode }) => statusCode === 200 || statusCode === 204)).to.have.length(1);
      const user = (await service.api.get(`users/${me.id}`)).body;
      expect([user.username, user.primaryEmail].filter(Boolean)).to.have.length(1);
    });

    it('replaces custom data with the `custom_data` scope, and refuses it without', async () => {
      const without = await signedIn('openid profile');
      expectError(await without.call('patch', 'my-account', { customData: { a: 1 } }), 400, 'auth.unauthorized');

      const me = await signedIn('openid profile custom_data', { customData: { old: true } });
      expectStatus(await me.call('patch', 'my-account', { customData: { first: 'value' } }), 200);
      const second = await me.call('patch', 'my-account', { customData: { newField: 'x', number: 42 } });
      expectStatus(second, 200);
      expect(second.body.customData).to.deep.equal({ newField: 'x', number: 42 });
      expect((await service.api.get(`users/${me.id}`)).body.customData).to.deep.equal({ newField: 'x', number: 42 });
    });

    it('needs the `profile` scope, refuses bad input with 400 and changes nothing then', async () => {
      const noProfile = await signedIn('openid');
      expectError(await noProfile.call('patch', 'my-account', { name: 'x' }), 400, 'auth.unauthorized');
      const me = await signedIn('openid profile');
      expectError(await me.call('patch', 'my-account', { avatar: 'not a url' }), 400, 'guard.invalid_input');
      expectError(await me.call('patch', 'my-account', { isSuspended: true }), 400, 'guard.invalid_input');
      expect((await service.api.get(`users/${me.id}`)).body).to.include({ avatar: null, isSuspended: false });
    });

    it('refuses a field the account center does not let people edit', async () => {
      const me = await signedIn('openid profile');
      const center = (await service.api.get('account-center')).body;
      try {
        expectStatus(await service.api.patch('account-center', { json: { fields: { name: 'ReadOnly' } } }), 200);
        expectError(await me.call('patch', 'my-account', { name: 'x' }), 400, 'account_center.field_not_editable');
        expectError(
          await me.call('patch', 'my-account/profile', { nickname: 'x' }),
          400,
          'account_center.field_not_editable',
        );
      } finally {
        await service.api.patch('account-center', { json: { fields: center.fields } });
      }
    });
  });

  describe('PATCH /my-account/profile', () => {
    it('merges OpenID profile fields; the address needs the `address` scope', async () => {
      const me = await signedIn('openid profile');
      const first = await me.call('patch', 'my-account/profile', { profile: 'HI', middleName: 'middleName' });
      expectStatus(first, 200);
      expect(first.body).to.deep.equal({ profile: 'HI', middleName: 'middleName' });
      const second = await me.call('patch', 'my-account/profile', { nickname: 'Nick' });
      expect(second.body).to.deep.equal({ profile: 'HI', middleName: 'middleName', nickname: 'Nick' });
      expectError(
        await me.call('patch', 'my-account/profile', { address: { country: 'USA' } }),
        400,
        'auth.unauthorized',
      );

      const withAddress = await signedIn('openid profile address');
      const address = await withAddress.call('patch', 'my-account/profile', { address: { country: 'USA' } });
      expectStatus(address, 200);
      expect(address.body).to.deep.equal({ address: { country: 'USA' } });
    });
  });

  describe('mfa-settings and logto-configs', () => {
    it('are read with the `identities` scope and changed with a proof as well', async () => {
      const without = await signedIn('openid profile');
      expectError(await without.call('get', 'my-account/mfa-settings'), 401, 'auth.unauthorized');
      expectError(await without.call('get', 'my-account/logto-configs'), 401, 'auth.unauthorized');

      const me = await signedIn('openid profile identities');
      expect((await me.call('get', 'my-account/mfa-settings')).body).to.deep.equal({ skipMfaOnSignIn: false });
      expectError(
        await me.call('patch', 'my-account/mfa-settings', { skipMfaOnSignIn: true }),
        401,
        'verification_record.permission_denied',
      );
      const proof = await me.proof();
      const set = await me.call('patch', 'my-account/mfa-settings', { skipMfaOnSignIn: true }, proof);
      expect(set.body).to.deep.equal({ skipMfaOnSignIn: true });

      const configs = await me.call('patch', 'my-account/logto-configs', { mfa: { skipped: true } }, proof);
      expectStatus(configs, 200);
      expect(configs.body).to.deep.equal({
        mfa: { skipped: true, skipMfaOnSignIn: true },
        passkeySignIn: { skipped: false },
      });
      expect((await me.call('get', 'my-account/logto-configs')).body.mfa.skipped).to.equal(true);
      expect((await service.api.get(`users/${me.id}/logto-configs`)).body.mfa).to.deep.equal({
        skipped: true,
        skipMfaOnSignIn: true,
      });
    });
  });

  describe('third-party applications', () => {
    it("read the account through the person's token but change nothing, not even a verification", async () => {
      const app = await createApplication(service, 'Traditional', {
        isThirdParty: true,
        oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      });
      const username = unique('granted');
      const created = await service.api.post('users', { json: { username, password } });
      expectStatus(created, 200);
      const tokens = await signIn(
        service,
        { clientId: app.id, redirectUri, clientSecret: app.secret },
        { username, password },
        { scope: 'openid' },
      );
      const call = accountApi(service, tokens.access_token);
      expect((await call('get', 'my-account')).body).to.include({ id: created.body.id });
      for (const [method, path, json] of [
        ['patch', 'my-account', { name: 'x' }],
        ['post', 'verifications/password', { password }],
        ['post', 'my-account/password', { password: 'Another-Horse-8' }],
      ] as const) {
        expectError(await call(method, path, json), 403, 'auth.third_party_application_forbidden');
      }
      expect((await service.api.get(`users/${created.body.id}`)).body.name).to.equal(null);
    });
  });

  describe('sessions', () => {
    it('lists my sessions with the sessions scope and a proof, the caller’s marked current', async () => {
      const me = await signedIn(`openid profile ${sessionsScope}`);
      expectError(await me.call('get', 'my-account/sessions'), 401, 'verification_record.permission_denied');
      const noScope = await signedIn('openid profile');
      expectError(
        await noScope.call('get', 'my-account/sessions', undefined, await noScope.proof()),
        401,
        'auth.unauthorized',
      );

      // A second sign-in of the same person, from another browser.
      await signIn(
        service,
        { clientId: setting.spa.id, redirectUri },
        { username: me.username, password },
        { scope: 'openid' },
      );
      const proof = await me.proof();
      const listed = await me.call('get', 'my-account/sessions', undefined, proof);
      expectStatus(listed, 200);
      const sessions = listed.body.sessions as Array<{ isCurrent: boolean; payload: { uid: string } }>;
      expect(sessions).to.have.length(2);
      expect(sessions.filter((session) => session.isCurrent)).to.have.length(1);

      const other = sessions.find((session) => !session.isCurrent)!;
      expectStatus(await me.call('delete', `my-account/sessions/${other.payload.uid}`, undefined, proof), 204);
      const after = await me.call('get', 'my-account/sessions', undefined, proof);
      expect((after.body.sessions as unknown[]).length).to.equal(1);
      expectError(
        await me.call('delete', `my-account/sessions/${other.payload.uid}`, undefined, proof),
        404,
        'oidc.session_not_found',
      );
      // Another person's session is not mine to end.
      const stranger = await signedIn(`openid ${sessionsScope}`);
      const theirs = (await stranger.call('get', 'my-account/sessions', undefined, await stranger.proof())).body
        .sessions as Array<{ payload: { uid: string } }>;
      expectError(
        await me.call('delete', `my-account/sessions/${theirs[0].payload.uid}`, undefined, proof),
        404,
        'oidc.session_not_found',
      );
    });
  });
});
