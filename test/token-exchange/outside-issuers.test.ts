import { expect } from 'chai';
import { generateKeyPair, SignJWT } from 'jose';

import { startDocumentServer } from '../support/document-server.ts';
import { createApplication } from '../support/fixtures.ts';
import { HookEvents } from '../support/hook-events.ts';
import { startService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import { type Federation, federationSetup, stopFederation } from './outside-issuer-support.ts';
import {
  accessTokenType,
  claimsOf,
  dpopKey,
  dpopProof,
  exchange,
  expectIssued,
  expectOAuthError,
  signWithServiceKey,
  waitForLog,
} from './support.ts';

const jwtType = 'urn:ietf:params:oauth:token-type:jwt';

/**
 * RFC 8693 federation: a JWT of a trusted outside issuer (here a second instance of the service) is
 * a subject token, under that issuer's policy only.
 */
describe('token exchange: subject tokens of trusted outside issuers', () => {
  let fed: Federation;

  before(async function () {
    this.timeout(120_000);
    fed = await federationSetup();
  });
  after(() => stopFederation(fed));

  const outsideIssuer = () => `${fed.outside.url}/oidc`;
  const swap = (subjectToken: string, type = jwtType, application = fed.setup.backend) =>
    exchange(fed.ours, application, {
      subject_token: subjectToken,
      subject_token_type: type,
      resource: fed.setup.apiB.resource.indicator,
      scope: 'read:b',
    });
  /** A token with the outside issuer's claims, signed with `outside`'s own key unless said otherwise. */
  const outsideClaims = (extra: Record<string, unknown> = {}) => ({
    iss: outsideIssuer(),
    aud: fed.far.apiA.resource.indicator,
    sub: fed.far.user.id,
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 300,
    ...extra,
  });

  describe('the management API', () => {
    it('lists, reads and updates the policy', async () => {
      const listed = await fed.ours.api.get('trusted-issuers');
      expect(listed.statusCode).to.equal(200);
      expect(listed.headers['total-number']).to.equal('1');
      expect(listed.body[0]).to.deep.include({ id: fed.policy.id, issuer: outsideIssuer(), algorithms: ['ES256'] });
      const read = await fed.ours.api.get(`trusted-issuers/${fed.policy.id}`);
      expect(read.body).to.deep.equal(fed.policy);
      const renamed = await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, { json: { name: 'renamed' } });
      expect(renamed.statusCode).to.equal(200);
      expect(renamed.body).to.deep.equal({ ...fed.policy, name: 'renamed' });
    });

    it('refuses a second policy for the same issuer (422), unknown applications (404) and bad bodies (400)', async () => {
      const body = { ...fed.policy, id: undefined, createdAt: undefined };
      const duplicate = await fed.ours.api.post('trusted-issuers', { json: body });
      expect(duplicate.statusCode).to.equal(422);
      expect(duplicate.body.code).to.equal('entity.unique_integrity_violation');
      const unknownApp = await fed.ours.api.post('trusted-issuers', {
        json: { ...body, issuer: 'https://elsewhere.example.com', applicationIds: ['nope'] },
      });
      expect(unknownApp.statusCode).to.equal(404);
      for (const bad of [
        { ...body, issuer: 'https://other.example.com', algorithms: ['HS256'] },
        { ...body, issuer: 'https://other.example.com', userMapping: { claim: 'sub', by: 'identity' } },
        { ...body, issuer: 'ftp://other.example.com' },
      ]) {
        const refused = await fed.ours.api.post('trusted-issuers', { json: bad });
        expect(refused.statusCode, JSON.stringify(bad)).to.equal(400);
        expect(refused.body.code).to.equal('guard.invalid_input');
      }
    });

    it('creates (audited like every management write) and deletes (204, then 404); without a management token: 401', async () => {
      const created = await fed.ours.api.post('trusted-issuers', {
        json: {
          name: 'short-lived',
          issuer: 'https://short.example.com',
          jwksUri: 'https://short.example.com/jwks',
          audience: 'https://ours.example.com',
          userMapping: { claim: 'email', by: 'email' },
          applicationIds: [],
        },
      });
      expect(created.statusCode).to.equal(201);
      expect(created.body.algorithms).to.deep.equal(['RS256', 'ES256']);
      const audited = await waitForLog(
        fed.ours,
        { logKey: 'Management.Write' },
        (entry) => entry.payload.createdId === created.body.id,
      );
      expect(audited.payload).to.deep.include({ method: 'POST', route: '/api/trusted-issuers', status: 201 });
      expect((await fed.ours.api.delete(`trusted-issuers/${created.body.id}`)).statusCode).to.equal(204);
      expect((await fed.ours.api.delete(`trusted-issuers/${created.body.id}`)).statusCode).to.equal(404);
      expect((await fed.ours.http.get('api/trusted-issuers')).statusCode).to.equal(401);
    });

    it('refuses a policy naming our own issuer, on create and on update (400)', async () => {
      for (const issuer of [fed.ours.config.issuer, `${fed.ours.config.issuer}/`]) {
        const created = await fed.ours.api.post('trusted-issuers', {
          json: {
            name: 'ourselves',
            issuer,
            jwksUri: `${fed.ours.url}/oidc/jwks`,
            audience: 'https://ours.example.com',
            userMapping: { claim: 'sub', by: 'jit' },
            applicationIds: [],
          },
        });
        expect(created.statusCode, JSON.stringify(created.body)).to.equal(400);
        expect(created.body.message).to.match(/this service's own/);
      }
      const updated = await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, {
        json: { issuer: fed.ours.config.issuer },
      });
      expect(updated.statusCode, JSON.stringify(updated.body)).to.equal(400);
    });

    it('is in the OpenAPI document', async () => {
      const { body } = await fed.ours.http.get('api/swagger.json');
      expect(Object.keys(body.paths)).to.include.members(['/api/trusted-issuers', '/api/trusted-issuers/{id}']);
    });
  });

  it('accepts the outside token (type jwt) and makes its user just in time, once (User.Created)', async () => {
    const hooks = await HookEvents.start(fed.ours);
    let first: ReturnType<typeof expectIssued>;
    try {
      const { result, payloads } = await hooks.expect(['User.Created'], async () =>
        expectIssued(await swap(fed.outsideToken)),
      );
      first = result;
      expect(payloads['User.Created'][0].data.id).to.equal(claimsOf(first.access_token).sub);
      expect(payloads['User.Created'][0]).to.deep.include({ path: '/oidc/token', method: 'POST', status: 200 });
      await hooks.expect([], async () => expectIssued(await swap(fed.outsideToken)));
    } finally {
      await hooks.stop();
    }
    const claims = claimsOf(first.access_token);
    expect(claims.iss).to.equal(`${fed.ours.url}/oidc`);
    expect(claims.aud).to.equal(fed.setup.apiB.resource.indicator);
    expect(claims.client_id).to.equal(fed.setup.backend.id);
    expect(claims.sub).to.be.a('string').and.not.equal(fed.setup.user.id);
    // A new user holds no role on API B yet: no scope.
    expect(first.scope).to.equal('');
    expect((await fed.ours.api.get(`users/${claims.sub}`)).statusCode).to.equal(200);

    await fed.ours.api.post(`users/${claims.sub}/roles`, { json: { roleIds: [fed.setup.role.id] } });
    const again = expectIssued(await swap(fed.outsideToken, accessTokenType));
    expect(claimsOf(again.access_token).sub).to.equal(claims.sub);
    expect(again.scope).to.equal('read:b');
  });

  it('makes no user for a subject when the exchange is refused after its token was accepted (its resource, its actor)', async () => {
    const token = await signWithServiceKey(fed.outside, outsideClaims({ sub: unique('refused') }));
    const hooks = await HookEvents.start(fed.ours);
    try {
      await hooks.expect([], async () => {
        const unknownResource = await exchange(fed.ours, fed.setup.backend, {
          subject_token: token,
          subject_token_type: jwtType,
          resource: 'https://nowhere.example.com',
          scope: 'read:b',
        });
        expectOAuthError(unknownResource, 400, 'invalid_target', /nowhere\.example\.com/);
        const badActor = await exchange(fed.ours, fed.setup.backend, {
          subject_token: token,
          subject_token_type: jwtType,
          actor_token: 'not-a-token',
          actor_token_type: accessTokenType,
          resource: fed.setup.apiB.resource.indicator,
          scope: 'read:b',
        });
        expectOAuthError(badActor, 400, 'invalid_request', /^actor_token/);
      });
      // The same token then makes its user, once.
      await hooks.expect(['User.Created'], async () => expectIssued(await swap(token)));
    } finally {
      await hooks.stop();
    }
  });

  describe("the outside token's own claims, as our tokens' are", () => {
    const tokenEndpoint = () => `${fed.ours.url}/oidc/token`;
    const basic = () =>
      `Basic ${Buffer.from(`${fed.setup.backend.id}:${fed.setup.backend.secret}`).toString('base64')}`;

    it("caps the exchanged token at the outside token's end (lifetimes never grow)", async () => {
      const exp = Math.floor(Date.now() / 1000) + 90;
      const token = await signWithServiceKey(fed.outside, outsideClaims({ exp }));
      const issued = expectIssued(await swap(token));
      expect(issued.expires_in).to.be.at.most(90).and.above(0);
      expect(claimsOf(issued.access_token).exp).to.be.at.most(exp);
    });

    it('enforces its may_act: only the actor it names may act (RFC 8693 §4.4)', async () => {
      const agent = await createApplication(fed.ours, 'MachineToMachine');
      const other = await createApplication(fed.ours, 'MachineToMachine');
      const actorTokenOf = async (application: { id: string; secret: string }) =>
        String(
          (await fed.ours.token(application.id, application.secret, { grant_type: 'client_credentials' })).body
            .access_token,
        );
      const token = await signWithServiceKey(fed.outside, outsideClaims({ may_act: { client_id: agent.id } }));
      const delegate = async (actor: { id: string; secret: string }) =>
        exchange(fed.ours, fed.setup.backend, {
          subject_token: token,
          subject_token_type: jwtType,
          actor_token: await actorTokenOf(actor),
          actor_token_type: accessTokenType,
          resource: fed.setup.apiB.resource.indicator,
          scope: 'read:b',
        });
      expectOAuthError(await delegate(other), 400, 'invalid_request', /may_act/);
      const allowed = expectIssued(await delegate(agent));
      expect(claimsOf(allowed.access_token).act).to.deep.include({ sub: agent.id, client_id: agent.id });
    });

    it('exchanges a DPoP-bound outside token (cnf.jkt) only with a proof of its key (RFC 9449)', async () => {
      const key = await dpopKey();
      const token = await signWithServiceKey(fed.outside, outsideClaims({ cnf: { jkt: key.jkt } }));
      const form = {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: token,
        subject_token_type: jwtType,
        resource: fed.setup.apiB.resource.indicator,
        scope: 'read:b',
      };
      const unproven = await fed.ours.http.post('oidc/token', { form, headers: { authorization: basic() } });
      expectOAuthError(unproven, 400, 'invalid_request', /^subject_token .*DPoP/);
      const other = await dpopKey();
      const wrongKey = await fed.ours.http.post('oidc/token', {
        form,
        headers: { authorization: basic(), dpop: await dpopProof(other, tokenEndpoint()) },
      });
      expectOAuthError(wrongKey, 400, 'invalid_request', /^subject_token .*DPoP/);
      const proven = await fed.ours.http.post('oidc/token', {
        form,
        headers: { authorization: basic(), dpop: await dpopProof(key, tokenEndpoint()) },
      });
      expect(expectIssued(proven).token_type).to.equal('DPoP');
    });
  });

  it('makes one user per new subject when several share a verified email at the same instant (the email goes to one)', async () => {
    const email = `${unique('twins')}@example.com`;
    // Twelve at once: under READ COMMITTED a later check in one transaction can see the email another just took.
    const tokens = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        signWithServiceKey(fed.outside, outsideClaims({ sub: unique(`twin${n}`), email, email_verified: true })),
      ),
    );
    const answers = await Promise.all(tokens.map((token) => swap(token)));
    const subjects = answers.map((answer) => claimsOf(expectIssued(answer).access_token).sub);
    expect(new Set(subjects).size).to.equal(12);
    const users = await Promise.all(subjects.map(async (id) => (await fed.ours.api.get(`users/${id}`)).body));
    expect(users.filter((user) => user.primaryEmail === email)).to.have.length(1);
  });

  describe('mapping by email: a verified email only', () => {
    let email: string;
    let user: { id: string };
    const mapBy = async (userMapping: Record<string, unknown>) => {
      const patched = await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, { json: { userMapping } });
      expect(patched.statusCode, JSON.stringify(patched.body)).to.equal(200);
    };
    const swapWith = async (extra: Record<string, unknown>) =>
      swap(await signWithServiceKey(fed.outside, outsideClaims(extra)));
    before(async () => {
      email = `${unique('fed')}@example.com`;
      user = (await fed.ours.api.post('users', { json: { primaryEmail: email } })).body;
    });
    beforeEach(() => mapBy({ claim: 'email', by: 'email' }));
    after(() => mapBy(fed.policy.userMapping));

    it('maps an email the issuer says is verified (email_verified: true) to the user who has it', async () => {
      expect(claimsOf(expectIssued(await swapWith({ email, email_verified: true })).access_token).sub).to.equal(
        user.id,
      );
      const stranger = await swapWith({ email: 'nobody@example.com', email_verified: true });
      expectOAuthError(stranger, 400, 'invalid_request', /no user has that email/);
    });

    it('compares emails as our own lookups do: case does not tell two addresses apart', async () => {
      const shouted = await swapWith({ email: email.toUpperCase(), email_verified: true });
      expect(claimsOf(expectIssued(shouted).access_token).sub).to.equal(user.id);
    });

    it('refuses an email that is not verified, saying why: false, absent, the string "true"', async () => {
      expectOAuthError(
        await swapWith({ email, email_verified: false }),
        400,
        'invalid_request',
        /email_verified is false/,
      );
      expectOAuthError(await swapWith({ email }), 400, 'invalid_request', /email_verified is absent/);
      expectOAuthError(
        await swapWith({ email, email_verified: 'true' }),
        400,
        'invalid_request',
        /email_verified is the string "true", not true/,
      );
      expectOAuthError(
        await swapWith({ email: email.toUpperCase(), email_verified: 'TRUE' }),
        400,
        'invalid_request',
        /only a verified email/,
      );
    });

    it('takes the email from the claim the policy names as holding a verified email', async () => {
      await mapBy({ claim: 'email', by: 'email', verifiedEmailClaim: 'verified_email' });
      expect(claimsOf(expectIssued(await swapWith({ verified_email: email })).access_token).sub).to.equal(user.id);
      // The unverified email beside it is not read.
      expectOAuthError(
        await swapWith({ email, email_verified: true }),
        400,
        'invalid_request',
        /no usable 'verified_email' claim/,
      );
    });

    it('refuses at save a policy that finds users by email through another claim than the email', async () => {
      const refused = await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, {
        json: { userMapping: { claim: 'sub', by: 'email' } },
      });
      expect(refused.statusCode, JSON.stringify(refused.body)).to.equal(400);
      expect(JSON.stringify(refused.body)).to.match(/by email/);
    });
  });

  it('remembers a failed key-set fetch for a while: a 404 key set is not fetched again for each request', async () => {
    const documents = await startDocumentServer();
    const issuer = 'https://keyless.example.com';
    const created = await fed.ours.api.post('trusted-issuers', {
      json: {
        name: 'keyless',
        issuer,
        jwksUri: documents.url('/jwks'),
        audience: fed.far.apiA.resource.indicator,
        algorithms: ['ES256'],
        userMapping: { claim: 'sub', by: 'jit' },
        applicationIds: [fed.setup.backend.id],
      },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(201);
    try {
      const token = await signWithServiceKey(fed.outside, outsideClaims({ iss: issuer }));
      for (let attempt = 0; attempt < 5; attempt++) {
        expectOAuthError(await swap(token), 400, 'invalid_request', /jwksUri could not be fetched/);
      }
      expect(documents.fetches('/jwks')).to.equal(1);
    } finally {
      await fed.ours.api.delete(`trusted-issuers/${created.body.id}`);
      await documents.close();
    }
  });

  it('refuses a token from an issuer no policy names (wrong issuer)', async () => {
    const token = await signWithServiceKey(fed.outside, outsideClaims({ iss: 'https://stranger.example.com/oidc' }));
    expectOAuthError(await swap(token), 400, 'invalid_request', 'unsupported subject_token_type');
    // As an access token it is one of another issuer, as before.
    expectOAuthError(await swap(token, accessTokenType), 400, 'invalid_request', /subject_token/);
  });

  it("refuses a token signed with a key not in the issuer's key set (wrong key)", async () => {
    // Our own key, which the outside issuer's set does not hold.
    const ourKey = await signWithServiceKey(fed.ours, outsideClaims());
    expectOAuthError(await swap(ourKey), 400, 'invalid_request', /key that is not in the issuer's key set/);
    // A key of no one's, under the kid of the issuer's own key.
    const { privateKey } = await generateKeyPair('ES256');
    const { kid } = JSON.parse(Buffer.from(fed.outsideToken.split('.')[0], 'base64url').toString()) as { kid: string };
    const forged = await new SignJWT(outsideClaims())
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
      .sign(privateKey);
    expectOAuthError(await swap(forged), 400, 'invalid_request', /signature does not verify/);
  });

  it('refuses a token for another audience (wrong audience)', async () => {
    const token = await signWithServiceKey(fed.outside, outsideClaims({ aud: fed.far.apiB.resource.indicator }));
    expectOAuthError(await swap(token), 400, 'invalid_request', /audience is not/);
  });

  it('refuses an expired token', async () => {
    const token = await signWithServiceKey(fed.outside, outsideClaims({ exp: Math.floor(Date.now() / 1000) - 60 }));
    expectOAuthError(await swap(token), 400, 'invalid_request', 'subject_token is expired');
  });

  it('checks a token it accepted before (its signature is checked once) for expiry every time, and under the policy as it is now', async function () {
    this.timeout(30_000);
    // Time for the exchanges below on a busy machine: a token with under a second left is refused.
    const exp = Math.floor(Date.now() / 1000) + 8;
    const token = await signWithServiceKey(fed.outside, outsideClaims({ exp }));
    expectIssued(await swap(token));
    expectIssued(await swap(token));

    await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, {
      json: { audience: fed.far.apiB.resource.indicator },
    });
    try {
      expectOAuthError(await swap(token), 400, 'invalid_request', /audience is not/);
    } finally {
      await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, { json: { audience: fed.policy.audience } });
    }
    expectIssued(await swap(token));

    // At `exp`: the contract's 5 s of clock tolerance would still pass the signature check, but an
    // exchanged token never outlives its subject token, so none is issued.
    await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now()));
    expectOAuthError(await swap(token), 400, 'invalid_request', 'subject_token is expired');
  });

  it('refuses an algorithm the policy does not allow', async () => {
    await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, { json: { algorithms: ['RS256'] } });
    try {
      expectOAuthError(await swap(fed.outsideToken), 400, 'invalid_request', /algorithm the policy does not allow/);
    } finally {
      await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, { json: { algorithms: fed.policy.algorithms } });
    }
  });

  it('refuses an application the policy does not list (policy for another app)', async () => {
    const other = await createApplication(fed.ours, 'Traditional', {
      oidcClientMetadata: { redirectUris: ['http://other.test/callback'], postLogoutRedirectUris: [] },
      customClientMetadata: { allowTokenExchange: true },
    });
    expectOAuthError(
      await swap(fed.outsideToken, jwtType, other),
      400,
      'invalid_request',
      new RegExp(`does not list application ${other.id}`),
    );
  });

  it('fetches the key set through the SSRF guard: a loopback jwksUri is refused when private targets are not allowed', async function () {
    this.timeout(60_000);
    const guarded = await startService({ env: { HOOKS_ALLOW_PRIVATE_TARGETS: 'false' } });
    try {
      const backend = await createApplication(guarded, 'Traditional', {
        oidcClientMetadata: { redirectUris: ['http://api-a.test/callback'], postLogoutRedirectUris: [] },
        customClientMetadata: { allowTokenExchange: true },
      });
      const resource = (
        await guarded.api.post('resources', {
          json: { name: 'b', indicator: 'https://b.example.com', isExchangeTarget: true },
        })
      ).body;
      await guarded.api.post('trusted-issuers', {
        json: { ...fed.policy, id: undefined, createdAt: undefined, applicationIds: [backend.id] },
      });
      const refused = await exchange(guarded, backend, {
        subject_token: fed.outsideToken,
        subject_token_type: jwtType,
        resource: resource.indicator,
      });
      expectOAuthError(
        refused,
        400,
        'invalid_request',
        /jwksUri could not be fetched \(the issuer's jwksUri (127\.0\.0\.1 is|localhost resolves to \S+,) a private or reserved address \(HOOKS_ALLOW_PRIVATE_TARGETS is off\)\)/,
      );
    } finally {
      await guarded.stop();
    }
  });
});
