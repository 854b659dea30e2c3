import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import passport from 'passport';
import OpenIDConnectStrategy, { type Profile } from 'passport-openidconnect';

import { Browser } from '../experience/browser.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { submitPasswordSignIn } from '../support/sign-in.ts';

/**
 * passport-openidconnect in an Express application, configured as its README says (issuer, the
 * three endpoints, client id and secret, callback URL, scopes). The strategy keeps its state in the
 * session; one in-memory session stands in for express-session.
 */
describe('passport-openidconnect with its defaults', () => {
  let service: TestService;
  const person = { username: 'passport_user', password: 'Correct-Horse-9' };

  before(async () => {
    service = await startService();
    const user = await service.api.post('users', {
      json: {
        ...person,
        name: 'Pat Port',
        primaryEmail: 'pat@example.com',
        profile: { givenName: 'Pat', familyName: 'Port', preferredUsername: 'pat' },
      },
    });
    expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
  });
  after(() => service.stop());

  it("signs a person in and hands the application a profile with the person's names and email", async () => {
    const web = express();
    const server = web.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = await createApplication(service, 'Traditional', {
        oidcClientMetadata: { redirectUris: [`${origin}/callback`], postLogoutRedirectUris: [] },
      });
      const issuer = service.config.issuer;
      passport.use(
        new OpenIDConnectStrategy(
          {
            issuer,
            authorizationURL: `${issuer}/auth`,
            tokenURL: `${issuer}/token`,
            userInfoURL: `${issuer}/me`,
            clientID: client.id,
            clientSecret: client.secret,
            callbackURL: `${origin}/callback`,
            scope: ['profile', 'email'],
          },
          (_issuer: string, profile: Profile, done: (error: null, user: Profile) => void) => done(null, profile),
        ),
      );
      const session = {};
      web.use((request, _response, next) => {
        Object.assign(request, { session });
        next();
      });
      web.use(passport.initialize());
      web.get('/login', passport.authenticate('openidconnect', { session: false }));
      web.get('/callback', passport.authenticate('openidconnect', { session: false }), (request, response) => {
        response.json(request.user);
      });

      const login = await fetch(`${origin}/login`, { redirect: 'manual' });
      const authorization = String(login.headers.get('location'));
      expect(authorization.startsWith(`${issuer}/auth?`), authorization).to.equal(true);
      const browser = new Browser(service);
      await browser.client.get(authorization.replace(`${service.url}/`, ''), { responseType: 'text' });
      const done = await submitPasswordSignIn(browser, person);
      const back = await browser.followToApplication(String(done.body.redirectTo));
      const answer = await fetch(back, { redirect: 'manual' });
      expect(answer.status, await answer.clone().text()).to.equal(200);
      const profile = (await answer.json()) as Profile;
      expect(profile.displayName).to.equal('Pat Port');
      expect(profile.username).to.equal('pat');
      expect(profile.name).to.deep.include({ givenName: 'Pat', familyName: 'Port' });
      expect(profile.emails).to.deep.equal([{ value: 'pat@example.com' }]);
    } finally {
      server.close();
    }
  });
});
