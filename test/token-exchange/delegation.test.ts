import { expect } from 'chai';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';

import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import {
  accessTokenType,
  claimsOf,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  signWithServiceKey,
  userAccessToken,
  waitForLog,
} from './support.ts';

type Act = { sub: string; client_id?: string; act?: Act };

/**
 * RFC 8693 delegation: API A's backend exchanges the user's token while an actor (a service, by its
 * client credentials token, or a user) is named by `actor_token`; the issued token's `act` is the
 * chain of actors, the subject token's own chain nested inside (§4.1), capped in depth; `may_act`
 * (§4.4) and the subject application's delegation policy say who may act.
 */
describe('token exchange: delegation with actor tokens (RFC 8693 §2.1, §4.1, §4.4)', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  let subjectToken: string;
  const actors: Array<{ id: string; secret: string }> = [];

  /** A client credentials token of an actor application: a JWT for API A, or opaque without a resource. */
  async function actorToken(actor: { id: string; secret: string }, resource?: string): Promise<string> {
    const response = await service.token(actor.id, actor.secret, {
      grant_type: 'client_credentials',
      ...(resource && { resource }),
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return String(response.body.access_token);
  }

  const apiA = () => setup.apiA.resource.indicator;
  const apiB = () => setup.apiB.resource.indicator;

  const delegate = (subject: string, actor: string, extra: Record<string, string> = {}) =>
    exchange(service, setup.backend, {
      subject_token: subject,
      subject_token_type: accessTokenType,
      actor_token: actor,
      actor_token_type: accessTokenType,
      resource: apiB(),
      scope: 'read:b',
      ...extra,
    });

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, apiA());
    for (let index = 0; index < 3; index += 1) {
      actors.push(await createApplication(service, 'MachineToMachine'));
    }
  });
  after(() => service.stop());

  describe('the issued token names the actor', () => {
    it('a client credentials JWT as actor: act {sub, client_id} = the actor application; API B verifies it', async () => {
      const body = expectIssued(await delegate(subjectToken, await actorToken(actors[0], apiA())));
      const jwks = createRemoteJWKSet(new URL(`${service.url}/oidc/jwks`));
      const { payload } = await jwtVerify(body.access_token, jwks, { issuer: `${service.url}/oidc`, audience: apiB() });
      expect(payload).to.include({ sub: setup.user.id, client_id: setup.backend.id, scope: 'read:b' });
      expect(payload.act).to.deep.equal({ sub: actors[0].id, client_id: actors[0].id });
      expect(body.token_type).to.equal('Bearer');
    });

    it('an opaque client credentials token as actor', async () => {
      const opaque = await actorToken(actors[1]);
      expect(opaque.split('.')).to.have.length(1);
      const body = expectIssued(await delegate(subjectToken, opaque));
      expect(claimsOf(body.access_token).act).to.deep.equal({ sub: actors[1].id, client_id: actors[1].id });
    });

    it("a user's token as actor: act {sub: the user, client_id: the application it was issued to}", async () => {
      const actorUser = await userAccessToken(service, setup.frontend.id, setup.user, apiA());
      const body = expectIssued(await delegate(subjectToken, actorUser));
      expect(claimsOf(body.access_token).act).to.deep.equal({ sub: setup.user.id, client_id: setup.frontend.id });
    });

    it('without an actor the exchange is the plain one (no act)', async () => {
      const body = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: subjectToken,
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b',
        }),
      );
      expect(claimsOf(body.access_token)).not.to.have.property('act');
    });
  });

  describe('chains: the subject token’s act is nested (§4.1), depth capped at TOKEN_EXCHANGE_MAX_ACT_DEPTH (5)', () => {
    it('chains of depth 1 to 5 are issued, each nesting the last; the 6th actor is refused', async () => {
      let current = subjectToken;
      let expected: Act | undefined;
      for (let depth = 1; depth <= 5; depth += 1) {
        const actor = actors[depth % actors.length];
        const body = expectIssued(await delegate(current, await actorToken(actor, apiA())));
        expected = { sub: actor.id, client_id: actor.id, ...(expected && { act: expected }) };
        expect(claimsOf(body.access_token).act, `depth ${depth}`).to.deep.equal(expected);
        current = body.access_token;
      }
      const refused = await delegate(current, await actorToken(actors[0], apiA()));
      expectOAuthError(refused, 400, 'invalid_request', /^actor chain too deep/);
    });

    it('keeps the chain when a delegated token is exchanged again without an actor', async () => {
      const first = expectIssued(await delegate(subjectToken, await actorToken(actors[0], apiA())));
      const again = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: first.access_token,
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b',
        }),
      );
      expect(claimsOf(again.access_token).act).to.deep.equal({ sub: actors[0].id, client_id: actors[0].id });
    });
  });

  describe('actor_token and actor_token_type (§2.1)', () => {
    it('refuses actor_token without actor_token_type, and the reverse', async () => {
      const token = await actorToken(actors[0], apiA());
      const base = { subject_token: subjectToken, subject_token_type: accessTokenType, resource: apiB() };
      expectOAuthError(
        await exchange(service, setup.backend, { ...base, actor_token: token }),
        400,
        'invalid_request',
        /actor_token_type/,
      );
      expectOAuthError(
        await exchange(service, setup.backend, { ...base, actor_token_type: accessTokenType }),
        400,
        'invalid_request',
        /'actor_token'/,
      );
    });

    it('refuses an actor_token_type other than access_token', async () => {
      const refused = await delegate(subjectToken, await actorToken(actors[0], apiA()), {
        actor_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      });
      expectOAuthError(refused, 400, 'invalid_request', /unsupported actor_token_type/);
    });

    it('refuses an expired actor token', async () => {
      const now = Math.floor(Date.now() / 1000);
      const expired = await signWithServiceKey(service, {
        iss: `${service.url}/oidc`,
        sub: actors[0].id,
        client_id: actors[0].id,
        aud: apiA(),
        jti: 'expired-actor',
        iat: now - 7200,
        exp: now - 3600,
        scope: '',
      });
      expectOAuthError(await delegate(subjectToken, expired), 400, 'invalid_request', /^actor_token is expired/);
    });

    it('refuses a revoked actor token', async () => {
      const token = await actorToken(actors[2], apiA());
      const revocation = await service.http.post('oidc/token/revocation', {
        form: { token },
        headers: { authorization: `Basic ${Buffer.from(`${actors[2].id}:${actors[2].secret}`).toString('base64')}` },
      });
      expect(revocation.statusCode).to.equal(200);
      expectOAuthError(await delegate(subjectToken, token), 400, 'invalid_request', /^actor_token was revoked/);
    });

    it("refuses a foreign actor token (another issuer's key) and one of another issuer signed with ours", async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const now = Math.floor(Date.now() / 1000);
      const claims = { sub: 'someone', client_id: 'elsewhere', jti: 'x', iat: now, exp: now + 600, scope: '' };
      const foreign = await new SignJWT({ ...claims, iss: `${service.url}/oidc` })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', jwk: await exportJWK(publicKey) })
        .sign(privateKey);
      expectOAuthError(await delegate(subjectToken, foreign), 400, 'invalid_request', /^actor_token signature/);
      const otherIssuer = await signWithServiceKey(service, { ...claims, iss: 'https://elsewhere.example.com' });
      expectOAuthError(await delegate(subjectToken, otherIssuer), 400, 'invalid_request', /another issuer/);
      expectOAuthError(
        await delegate(subjectToken, 'not-a-token-of-ours'),
        400,
        'invalid_request',
        /^actor_token is invalid/,
      );
    });
  });

  describe("may_act (§4.4) and the subject application's delegation policy", () => {
    const setPolicy = (allowedActorClientIds: string[]) =>
      service.api.patch(`applications/${setup.frontend.id}`, {
        json: { customClientMetadata: { delegation: { allowedActorClientIds } } },
      });

    after(() => setPolicy([]));

    it('validates the policy and returns it with the application', async () => {
      for (const delegation of [{ allowedActorClientIds: 'x' }, { allowedActorClientIds: [''] }, { others: [] }]) {
        const refused = await service.api.patch(`applications/${setup.frontend.id}`, {
          json: { customClientMetadata: { delegation } },
        });
        expect(refused.statusCode, JSON.stringify(delegation)).to.equal(400);
        expect(refused.body.code).to.equal('guard.invalid_input');
      }
      const saved = await setPolicy([actors[0].id]);
      expect(saved.statusCode).to.equal(200);
      expect(saved.body.customClientMetadata.delegation).to.deep.equal({ allowedActorClientIds: [actors[0].id] });
    });

    it('a policy naming one actor puts may_act {client_id} into the user tokens the application receives', async () => {
      await setPolicy([actors[0].id]);
      const token = await userAccessToken(service, setup.frontend.id, setup.user, apiA());
      expect(claimsOf(token).may_act).to.deep.equal({ client_id: actors[0].id });
    });

    it('may_act matched: the named actor is accepted', async () => {
      await setPolicy([actors[0].id]);
      const token = await userAccessToken(service, setup.frontend.id, setup.user, apiA());
      const body = expectIssued(await delegate(token, await actorToken(actors[0], apiA())));
      expect(claimsOf(body.access_token).act).to.deep.equal({ sub: actors[0].id, client_id: actors[0].id });
    });

    it('may_act not matched: another actor is refused, even after the policy changed', async () => {
      await setPolicy([actors[0].id]);
      const token = await userAccessToken(service, setup.frontend.id, setup.user, apiA());
      await setPolicy([]);
      const refused = await delegate(token, await actorToken(actors[1], apiA()));
      expectOAuthError(refused, 400, 'invalid_request', /may_act/);
    });

    it('may_act naming a sub is matched on the actor’s sub', async () => {
      const now = Math.floor(Date.now() / 1000);
      const base = {
        iss: `${service.url}/oidc`,
        sub: setup.user.id,
        client_id: setup.frontend.id,
        aud: apiA(),
        iat: now,
        exp: now + 600,
        scope: '',
      };
      const forActor1 = await signWithServiceKey(service, {
        ...base,
        jti: 'may-act-1',
        may_act: { sub: actors[1].id },
      });
      expectIssued(await delegate(forActor1, await actorToken(actors[1], apiA())));
      expectOAuthError(
        await delegate(forActor1, await actorToken(actors[2], apiA())),
        400,
        'invalid_request',
        /may_act/,
      );
    });

    it('a policy of several actors puts no may_act, and refuses an actor it does not list', async () => {
      await setPolicy([actors[0].id, actors[2].id]);
      const token = await userAccessToken(service, setup.frontend.id, setup.user, apiA());
      expect(claimsOf(token)).not.to.have.property('may_act');
      expectIssued(await delegate(token, await actorToken(actors[2], apiA())));
      const refused = await delegate(token, await actorToken(actors[1], apiA()));
      expectOAuthError(refused, 400, 'invalid_request', /delegation\.allowedActorClientIds/);
      // A token issued before the policy carries no may_act: the policy still applies to it.
      expectOAuthError(
        await delegate(subjectToken, await actorToken(actors[1], apiA())),
        400,
        'invalid_request',
        /delegation\.allowedActorClientIds/,
      );
    });
  });

  describe('may_act and the delegation policy travel through an exchange without an actor', () => {
    const setPolicy = (allowedActorClientIds: string[]) =>
      service.api.patch(`applications/${setup.frontend.id}`, {
        json: { customClientMetadata: { delegation: { allowedActorClientIds } } },
      });
    const plain = async (subject: string) =>
      expectIssued(
        await exchange(service, setup.backend, {
          subject_token: subject,
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b',
        }),
      ).access_token;
    after(() => setPolicy([]));

    it("keeps the subject token's may_act: only the actor it names may act with the exchanged token", async () => {
      await setPolicy([actors[0].id]);
      const exchanged = await plain(await userAccessToken(service, setup.frontend.id, setup.user, apiA()));
      expect(claimsOf(exchanged).may_act).to.deep.equal({ client_id: actors[0].id });
      expectOAuthError(
        await delegate(exchanged, await actorToken(actors[1], apiA())),
        400,
        'invalid_request',
        /may_act/,
      );
      expectIssued(await delegate(exchanged, await actorToken(actors[0], apiA())));
    });

    it("keeps the subject application's delegation policy: an actor it does not list is refused", async () => {
      await setPolicy([actors[0].id, actors[2].id]);
      const exchanged = await plain(await userAccessToken(service, setup.frontend.id, setup.user, apiA()));
      expect(claimsOf(exchanged).delegation_client_id).to.equal(setup.frontend.id);
      // Exchanged once more without an actor, the frontend's policy still governs.
      const twice = await plain(exchanged);
      expectOAuthError(
        await delegate(twice, await actorToken(actors[1], apiA())),
        400,
        'invalid_request',
        /delegation\.allowedActorClientIds/,
      );
      expectIssued(await delegate(twice, await actorToken(actors[2], apiA())));
    });
  });

  describe('introspection and audit show the chain', () => {
    it('introspection answers act (the whole chain) and may_act', async () => {
      const first = expectIssued(await delegate(subjectToken, await actorToken(actors[0], apiA())));
      const second = expectIssued(await delegate(first.access_token, await actorToken(actors[1], apiA())));
      const introspector = await createApplication(service, 'MachineToMachine');
      const response = await service.http.post('oidc/token/introspection', {
        form: { token: second.access_token },
        headers: {
          authorization: `Basic ${Buffer.from(`${introspector.id}:${introspector.secret}`).toString('base64')}`,
        },
      });
      expect(response.statusCode).to.equal(200);
      expect(response.body).to.include({ active: true, sub: setup.user.id, client_id: setup.backend.id });
      expect(response.body.act).to.deep.equal({
        sub: actors[1].id,
        client_id: actors[1].id,
        act: { sub: actors[0].id, client_id: actors[0].id },
      });

      const now = Math.floor(Date.now() / 1000);
      const withMayAct = await signWithServiceKey(service, {
        iss: `${service.url}/oidc`,
        sub: setup.user.id,
        client_id: setup.frontend.id,
        aud: apiA(),
        jti: 'introspect-may-act',
        iat: now,
        exp: now + 600,
        scope: '',
        may_act: { client_id: actors[0].id },
      });
      const shown = await service.http.post('oidc/token/introspection', {
        form: { token: withMayAct },
        headers: {
          authorization: `Basic ${Buffer.from(`${introspector.id}:${introspector.secret}`).toString('base64')}`,
        },
      });
      expect(shown.body).to.include({ active: true });
      expect(shown.body.may_act).to.deep.equal({ client_id: actors[0].id });
    });

    it('the audit entry records subject, client, resource, scopes asked and issued, and the actor chain', async () => {
      const first = expectIssued(await delegate(subjectToken, await actorToken(actors[0], apiA())));
      const second = expectIssued(
        await delegate(first.access_token, await actorToken(actors[2], apiA()), { scope: 'read:b delete:b' }),
      );
      expect(second.scope).to.equal('read:b');
      type Params = { actorChain?: unknown[]; scopesRequested?: string[] } | undefined;
      const entry = await waitForLog(service, { logKey: 'ExchangeTokenBy.TokenExchange' }, (candidate) => {
        const params = candidate.payload.params as Params;
        return params?.actorChain?.length === 2 && params.scopesRequested?.includes('delete:b') === true;
      });
      expect(entry.payload).to.include({ applicationId: setup.backend.id, userId: setup.user.id });
      expect(entry.payload.params).to.deep.include({
        resource: apiB(),
        scopesRequested: ['read:b', 'delete:b'],
        scopesIssued: ['read:b'],
        actorChain: [
          { sub: actors[2].id, clientId: actors[2].id },
          { sub: actors[0].id, clientId: actors[0].id },
        ],
      });
      // The console shows the chain with names: the actors' ids are among those the entry names.
      expect(entry.names).to.have.property(actors[2].id).that.is.a('string');
      expect(JSON.stringify(entry)).not.to.include(first.access_token);
    });
  });
});

describe('token exchange: TOKEN_EXCHANGE_MAX_ACT_DEPTH sets the depth', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;

  before(async () => {
    service = await startService({ env: { TOKEN_EXCHANGE_MAX_ACT_DEPTH: '2' } });
    setup = await delegationSetup(service);
  });
  after(() => service.stop());

  /** A user's token of ours that already carries a chain of `depth` actors. */
  async function chained(depth: number) {
    let act: Act | undefined;
    for (let level = 0; level < depth; level += 1) {
      act = { sub: `earlier-${level}`, client_id: `earlier-${level}`, ...(act && { act }) };
    }
    const now = Math.floor(Date.now() / 1000);
    return signWithServiceKey(service, {
      iss: `${service.url}/oidc`,
      sub: setup.user.id,
      client_id: setup.frontend.id,
      aud: setup.apiA.resource.indicator,
      jti: `chain-${depth}`,
      iat: now,
      exp: now + 600,
      scope: '',
      ...(act && { act }),
    });
  }

  it('with 2, a second actor is issued and a third refused', async () => {
    const actor = await createApplication(service, 'MachineToMachine');
    const actorToken = String(
      (await service.token(actor.id, actor.secret, { grant_type: 'client_credentials' })).body.access_token,
    );
    const form = (subject: string) => ({
      subject_token: subject,
      subject_token_type: accessTokenType,
      actor_token: actorToken,
      actor_token_type: accessTokenType,
      resource: setup.apiB.resource.indicator,
    });
    const issued = expectIssued(await exchange(service, setup.backend, form(await chained(1))));
    expect(claimsOf(issued.access_token).act).to.deep.include({
      sub: actor.id,
      act: { sub: 'earlier-0', client_id: 'earlier-0' },
    });
    expectOAuthError(
      await exchange(service, setup.backend, form(await chained(2))),
      400,
      'invalid_request',
      'actor chain too deep: the issued token would nest 3 act claims, at most 2 are allowed',
    );
  });

  it('refuses a subject token whose own chain is already deeper, even without an actor (a limit lowered since)', async () => {
    const form = async (depth: number) => ({
      subject_token: await chained(depth),
      subject_token_type: accessTokenType,
      resource: setup.apiB.resource.indicator,
    });
    expect(
      claimsOf(expectIssued(await exchange(service, setup.backend, await form(2))).access_token).act,
    ).to.deep.equal({ sub: 'earlier-1', client_id: 'earlier-1', act: { sub: 'earlier-0', client_id: 'earlier-0' } });
    expectOAuthError(
      await exchange(service, setup.backend, await form(3)),
      400,
      'invalid_request',
      'actor chain too deep: the issued token would nest 3 act claims, at most 2 are allowed',
    );
  });
});
