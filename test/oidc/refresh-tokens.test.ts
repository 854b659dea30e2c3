import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';

const webRedirectUri = 'http://app.test/callback';
const nativeRedirectUri = 'com.example.app:/callback';
const day = 86_400;

/** Refresh tokens as Logto's: offline_access, alwaysIssueRefreshToken, rotateRefreshToken, their lifetime. */
describe('refresh tokens', () => {
  let service: TestService;
  let indicator: string;
  const person = { username: 'refresher', password: 'Correct-Horse-9' };

  before(async () => {
    service = await startService();
    indicator = (await createResource(service, ['read'])).resource.indicator;
    await service.api.post('users', { json: person });
  });
  after(() => service.stop());

  async function application(type: string, extra: Record<string, unknown> = {}) {
    const redirectUri = type === 'Native' ? nativeRedirectUri : webRedirectUri;
    const app = await createApplication(service, type, {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      ...extra,
    });
    return { clientId: app.id, clientSecret: app.secret, redirectUri, confidential: type === 'Traditional' };
  }

  type App = Awaited<ReturnType<typeof application>>;

  const refresh = (app: App, refreshToken: string, extra: Record<string, string> = {}) =>
    service.http.post('oidc/token', {
      form: {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        ...(!app.confidential && { client_id: app.clientId }),
        ...extra,
      },
      ...(app.confidential && {
        headers: { authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}` },
      }),
    });

  const signInAt = (app: App, scope: string) =>
    signIn(service, app.confidential ? app : { clientId: app.clientId, redirectUri: app.redirectUri }, person, {
      scope,
      resource: indicator,
    });

  it('a first-party application asking offline_access gets a refresh token without prompt=consent', async () => {
    const app = await application('SPA');
    const tokens = await signInAt(app, 'openid offline_access');
    expect(tokens.refresh_token).to.be.a('string');
    const refreshed = await refresh(app, String(tokens.refresh_token), { resource: indicator });
    expect(refreshed.statusCode, JSON.stringify(refreshed.body)).to.equal(200);
    expect(decodeJwt(refreshed.body.access_token).aud).to.equal(indicator);
  });

  it('a third-party application gets one once the person allows it on the consent page', async () => {
    const app = await application('SPA', { isThirdParty: true });
    const tokens = await signInAt(app, 'openid offline_access');
    expect(tokens.refresh_token).to.be.a('string');
  });

  it('without offline_access: none, unless a web application has alwaysIssueRefreshToken (not a native one)', async () => {
    expect((await signInAt(await application('SPA'), 'openid')).refresh_token).to.equal(undefined);
    const always = { customClientMetadata: { alwaysIssueRefreshToken: true } };
    expect((await signInAt(await application('Traditional', always), 'openid')).refresh_token).to.be.a('string');
    expect((await signInAt(await application('SPA', always), 'openid')).refresh_token).to.be.a('string');
    expect((await signInAt(await application('Native', always), 'openid')).refresh_token).to.equal(undefined);
  });

  it("a public client's token rotates on every use, and a rotated token used again revokes the whole family", async () => {
    const app = await application('SPA');
    const first = String((await signInAt(app, 'openid offline_access')).refresh_token);
    const second = await refresh(app, first);
    expect(second.statusCode, JSON.stringify(second.body)).to.equal(200);
    expect(second.body.refresh_token).to.be.a('string').and.not.equal(first);

    const reused = await refresh(app, first);
    expect(reused.statusCode).to.equal(400);
    expect(reused.body).to.include({ error: 'invalid_grant' });
    // The thief's use ended the legitimate holder's token as well.
    const afterReuse = await refresh(app, String(second.body.refresh_token));
    expect(afterReuse.statusCode).to.equal(400);
    expect(afterReuse.body).to.include({ error: 'invalid_grant' });
  });

  it('a rotated token replayed many times at once is refused each time, never a 500', async () => {
    // Each replay revokes the family: concurrent deletes of one grant's rows, which MySQL may end
    // as deadlocks (a deadlock victim must be run again, not answered 500).
    const app = await application('SPA');
    const first = String((await signInAt(app, 'openid offline_access')).refresh_token);
    expect((await refresh(app, first)).statusCode).to.equal(200);
    const replays = await Promise.all(Array.from({ length: 24 }, () => refresh(app, first)));
    expect(replays.map((replay) => replay.statusCode)).to.deep.equal(replays.map(() => 400));
  });

  it('rotateRefreshToken: false keeps the same token working', async () => {
    const app = await application('SPA', { customClientMetadata: { rotateRefreshToken: false } });
    const token = String((await signInAt(app, 'openid offline_access')).refresh_token);
    for (let use = 0; use < 3; use++) {
      const refreshed = await refresh(app, token);
      expect(refreshed.statusCode, JSON.stringify(refreshed.body)).to.equal(200);
      expect(refreshed.body.refresh_token ?? token).to.equal(token);
    }
  });

  it('refreshTokenTtlInDays, refreshTokenTtl and idTokenTtl set the lifetimes', async () => {
    const lifetimeOf = async (app: App, refreshToken: string) => {
      const introspected = await service.http.post('oidc/token/introspection', {
        form: { token: refreshToken, client_id: app.clientId },
      });
      expect(introspected.body.active, JSON.stringify(introspected.body)).to.equal(true);
      return Number(introspected.body.exp) - Number(introspected.body.iat);
    };
    const inDays = await application('SPA', { customClientMetadata: { refreshTokenTtlInDays: 2 } });
    const tokens = await signInAt(inDays, 'openid offline_access');
    expect(await lifetimeOf(inDays, String(tokens.refresh_token))).to.equal(2 * day);

    const inSeconds = await application('SPA', { customClientMetadata: { refreshTokenTtl: 7200, idTokenTtl: 600 } });
    const short = await signInAt(inSeconds, 'openid offline_access');
    expect(await lifetimeOf(inSeconds, String(short.refresh_token))).to.equal(7200);
    const idToken = decodeJwt(short.id_token);
    expect(idToken.exp! - idToken.iat!).to.equal(600);

    const unset = await application('SPA');
    expect(await lifetimeOf(unset, String((await signInAt(unset, 'openid offline_access')).refresh_token))).to.equal(
      14 * day,
    );
  });
});
