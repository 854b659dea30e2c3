import { expect } from 'chai';

import { tokenDigest } from '../../lib/oidc/adapter.ts';
import { up as digestStoredTokens } from '../../migrations/0021_token_digests.ts';
import { openDatabase } from '../support/database.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';

const redirectUri = 'http://app.test/callback';

/*
 * Someone who reads the database (a backup, a replica, an SQL injection elsewhere) must not find
 * tokens they can use: refresh tokens and opaque access tokens are bearer credentials for days.
 */
describe('tokens at rest', () => {
  let service: TestService;
  let app: { id: string };
  before(async () => {
    service = await startService();
    app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const user = await service.api.post('users', { json: { username: 'carol', password: 'Correct-Horse-9' } });
    expect(user.statusCode).to.equal(200);
  });
  after(() => service.stop());

  const storedText = async () => {
    const db = openDatabase(service.config.dbUrl);
    try {
      const rows = await db('oidc_model_instances').select<Array<{ id: string; payload: string }>>('id', 'payload');
      return rows.map((row) => `${row.id} ${row.payload}`).join('\n');
    } finally {
      await db.destroy();
    }
  };

  it('stores neither the refresh token nor the opaque access token, and both still work', async () => {
    const tokens = await signIn(
      service,
      { clientId: app.id, redirectUri },
      { username: 'carol', password: 'Correct-Horse-9' },
      { scope: 'openid offline_access', prompt: 'consent' },
    );
    const refreshToken = String(tokens.refresh_token);
    expect(refreshToken).to.have.length.greaterThan(20);
    expect(tokens.access_token.split('.')).to.have.length(1, 'an opaque access token (no resource asked)');

    const stored = await storedText();
    expect(stored).to.not.include(refreshToken);
    expect(stored).to.not.include(tokens.access_token);

    const me = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.statusCode).to.equal(200);

    const refresh = (token: string) =>
      service.http.post('oidc/token', {
        form: { grant_type: 'refresh_token', refresh_token: token, client_id: app.id },
      });
    const refreshed = await refresh(refreshToken);
    expect(refreshed.statusCode, JSON.stringify(refreshed.body)).to.equal(200);
    const rotated = String(refreshed.body.refresh_token);
    expect(rotated).to.not.equal(refreshToken);
    expect(await storedText()).to.not.include(rotated);

    // A public client's refresh token rotates: the used one is refused, and its reuse ends the grant.
    const reused = await refresh(refreshToken);
    expect(reused.statusCode).to.equal(400);
    expect(reused.body.error).to.equal('invalid_grant');
    expect((await refresh(rotated)).body.error).to.equal('invalid_grant');
  });

  it('revokes an opaque access token found by its digest', async () => {
    const tokens = await signIn(
      service,
      { clientId: app.id, redirectUri },
      { username: 'carol', password: 'Correct-Horse-9' },
      { scope: 'openid' },
    );
    const revoked = await service.http.post('oidc/token/revocation', {
      form: { token: tokens.access_token, client_id: app.id },
    });
    expect(revoked.statusCode).to.equal(200);
    const me = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.statusCode).to.equal(401);
  });

  it('keeps refresh tokens stored before digests working once the migration has rewritten them', async () => {
    const tokens = await signIn(
      service,
      { clientId: app.id, redirectUri },
      { username: 'carol', password: 'Correct-Horse-9' },
      { scope: 'openid offline_access', prompt: 'consent' },
    );
    const refreshToken = String(tokens.refresh_token);
    const db = openDatabase(service.config.dbUrl);
    try {
      // Put the row back as an earlier version stored it: the token as id, `jti` in the payload.
      const where = { model_name: 'RefreshToken', id: tokenDigest(refreshToken) };
      const row = await db('oidc_model_instances').where(where).first<{ payload: string }>('payload');
      const payload = { ...(JSON.parse(row.payload) as object), jti: refreshToken };
      await db('oidc_model_instances')
        .where(where)
        .update({ id: refreshToken, payload: JSON.stringify(payload) });

      await digestStoredTokens(db);
      expect(await storedText()).to.not.include(refreshToken);
    } finally {
      await db.destroy();
    }
    const refreshed = await service.http.post('oidc/token', {
      form: { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.id },
    });
    expect(refreshed.statusCode, JSON.stringify(refreshed.body)).to.equal(200);
  });
});
