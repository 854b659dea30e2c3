import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as client from 'openid-client';

import { createApplication } from '../support/fixtures.ts';
import { HookEvents } from '../support/hook-events.ts';
import { unique } from '../support/values.ts';
import { type Federation, federationSetup, stopFederation } from '../token-exchange/outside-issuer-support.ts';
import {
  claimsOf,
  type DpopKey,
  dpopKey,
  dpopProof,
  expectIssued,
  expectOAuthError,
  signWithServiceKey,
  waitForLog,
} from '../token-exchange/support.ts';

const jwtBearer = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** RFC 7523 §2.1: a trusted outside issuer's JWT as the grant, under the same trust policy as in exchange. */
describe('JWT bearer grant (RFC 7523)', () => {
  let fed: Federation;

  before(async function () {
    this.timeout(120_000);
    fed = await federationSetup();
  });
  after(() => stopFederation(fed));

  const grant = (form: Record<string, string>, application: { id: string; secret: string } = fed.setup.backend) =>
    fed.ours.token(application.id, application.secret, {
      grant_type: jwtBearer,
      resource: fed.setup.apiB.resource.indicator,
      scope: 'read:b',
      ...form,
    });
  const outsideClaims = (extra: Record<string, unknown> = {}) => ({
    iss: `${fed.outside.url}/oidc`,
    aud: fed.far.apiA.resource.indicator,
    sub: fed.far.user.id,
    jti: randomUUID(),
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 300,
    ...extra,
  });
  /** A new assertion of the outside issuer for its user (each is granted once). */
  const freshAssertion = (extra: Record<string, unknown> = {}) => signWithServiceKey(fed.outside, outsideClaims(extra));

  it('makes no user for an assertion whose grant is refused for its resource', async () => {
    const assertion = await signWithServiceKey(fed.outside, outsideClaims({ sub: unique('refused') }));
    const hooks = await HookEvents.start(fed.ours);
    try {
      await hooks.expect([], async () => {
        expectOAuthError(await grant({ assertion, resource: 'https://nowhere.example.com' }), 400, 'invalid_target');
      });
      await hooks.expect(['User.Created'], async () => expectIssued(await grant({ assertion })));
    } finally {
      await hooks.stop();
    }
  });

  it('is advertised in discovery', async () => {
    const { body } = await fed.ours.http.get('oidc/.well-known/openid-configuration');
    expect(body.grant_types_supported).to.include(jwtBearer);
  });

  it('issues an access token for API B to the listed application (openid-client)', async () => {
    const config = await client.discovery(
      new URL(`${fed.ours.url}/oidc`),
      fed.setup.backend.id,
      fed.setup.backend.secret,
      undefined,
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- the test service is plain http on 127.0.0.1
      { execute: [client.allowInsecureRequests] },
    );
    const response = await client.genericGrantRequest(config, jwtBearer, {
      assertion: await freshAssertion(),
      resource: fed.setup.apiB.resource.indicator,
      scope: 'read:b',
    });
    expect(response.token_type).to.equal('bearer');
    expect(response.refresh_token).to.equal(undefined);
    const claims = claimsOf(response.access_token);
    expect(claims).to.include({
      iss: `${fed.ours.url}/oidc`,
      aud: fed.setup.apiB.resource.indicator,
      client_id: fed.setup.backend.id,
    });
    // The same outside subject is the same user, made once.
    const again = expectIssued(await grant({ assertion: await freshAssertion() }));
    expect(claimsOf(again.access_token).sub).to.equal(claims.sub);
  });

  it('grants an assertion once (its jti); a refused request does not use it up', async () => {
    const assertion = await freshAssertion();
    expectOAuthError(await grant({ assertion, resource: 'https://unknown.example.com' }), 400, 'invalid_target');
    expectIssued(await grant({ assertion }));
    expectOAuthError(await grant({ assertion }), 400, 'invalid_grant', /was used already \(its jti\)/);
  });

  it('refuses an assertion without jti, expiring more than an hour ahead, or issued in the future (RFC 7523 §3)', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectOAuthError(
      await grant({ assertion: await freshAssertion({ jti: undefined }) }),
      400,
      'invalid_grant',
      /has no jti/,
    );
    expectOAuthError(
      await grant({ assertion: await freshAssertion({ exp: now + 7200 }) }),
      400,
      'invalid_grant',
      /expires more than 3600 seconds ahead/,
    );
    expectOAuthError(
      await grant({ assertion: await freshAssertion({ iat: now + 600 }) }),
      400,
      'invalid_grant',
      /issued in the future \(iat\)/,
    );
  });

  it('is for confidential first-party applications only, as token exchange is (unauthorized_client)', async () => {
    const outsider = await createApplication(fed.ours, 'Traditional', {
      isThirdParty: true,
      oidcClientMetadata: { redirectUris: ['https://outsider.example.com/cb'], postLogoutRedirectUris: [] },
    });
    const native = await createApplication(fed.ours, 'Native', {
      oidcClientMetadata: { redirectUris: ['com.example.app:/cb'], postLogoutRedirectUris: [] },
    });
    const listed = await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, {
      json: { applicationIds: [...fed.policy.applicationIds, outsider.id, native.id] },
    });
    expect(listed.statusCode, JSON.stringify(listed.body)).to.equal(200);
    try {
      expectOAuthError(
        await grant({ assertion: await freshAssertion() }, outsider),
        400,
        'unauthorized_client',
        /third-party applications/,
      );
      const publicClient = await fed.ours.http.post('oidc/token', {
        form: {
          grant_type: jwtBearer,
          client_id: native.id,
          assertion: await freshAssertion(),
          resource: fed.setup.apiB.resource.indicator,
        },
      });
      expect(publicClient.statusCode, JSON.stringify(publicClient.body)).to.be.oneOf([400, 401]);
      expect(publicClient.body.error).to.be.oneOf(['unauthorized_client', 'invalid_client']);
    } finally {
      await fed.ours.api.patch(`trusted-issuers/${fed.policy.id}`, {
        json: { applicationIds: fed.policy.applicationIds },
      });
    }
  });

  it('binds the token to a DPoP proof (RFC 9449), and grants a DPoP-bound assertion (cnf.jkt) only with a proof of its key', async () => {
    const tokenEndpoint = `${fed.ours.url}/oidc/token`;
    const withProof = async (assertion: string, key?: DpopKey) =>
      fed.ours.http.post('oidc/token', {
        form: { grant_type: jwtBearer, assertion, resource: fed.setup.apiB.resource.indicator, scope: 'read:b' },
        headers: {
          authorization: `Basic ${Buffer.from(`${fed.setup.backend.id}:${fed.setup.backend.secret}`).toString('base64')}`,
          ...(key && { dpop: await dpopProof(key, tokenEndpoint) }),
        },
      });
    const key = await dpopKey();
    const bound = expectIssued(await withProof(await freshAssertion(), key));
    expect(bound.token_type).to.equal('DPoP');
    expect(claimsOf(bound.access_token).cnf).to.deep.equal({ jkt: key.jkt });

    const boundAssertion = await signWithServiceKey(fed.outside, outsideClaims({ cnf: { jkt: key.jkt } }));
    expectOAuthError(
      await withProof(boundAssertion),
      400,
      'invalid_grant',
      'assertion is DPoP-bound: send a DPoP proof of its key (cnf.jkt)',
    );
    expectOAuthError(
      await withProof(boundAssertion, await dpopKey()),
      400,
      'invalid_grant',
      "assertion is DPoP-bound to another key than the DPoP proof's",
    );
    expect(expectIssued(await withProof(boundAssertion, key)).token_type).to.equal('DPoP');
  });

  it('refuses without an assertion (invalid_request)', async () => {
    expectOAuthError(await grant({}), 400, 'invalid_request', "missing required parameter 'assertion'");
  });

  it('refuses an assertion of no trusted issuer, or of our own (invalid_grant)', async () => {
    const stranger = await signWithServiceKey(fed.outside, outsideClaims({ iss: 'https://stranger.example.com' }));
    expectOAuthError(await grant({ assertion: stranger }), 400, 'invalid_grant', /no trust policy names its issuer/);
    const ours = await signWithServiceKey(fed.ours, outsideClaims({ iss: `${fed.ours.url}/oidc` }));
    expectOAuthError(await grant({ assertion: ours }), 400, 'invalid_grant', /no trust policy names its issuer/);
  });

  it('refuses an expired assertion, a wrong audience and a wrong key (invalid_grant)', async () => {
    const expired = await signWithServiceKey(fed.outside, outsideClaims({ exp: Math.floor(Date.now() / 1000) - 60 }));
    expectOAuthError(await grant({ assertion: expired }), 400, 'invalid_grant', 'assertion is expired');
    const elsewhere = await signWithServiceKey(fed.outside, outsideClaims({ aud: 'https://elsewhere.example.com' }));
    expectOAuthError(await grant({ assertion: elsewhere }), 400, 'invalid_grant', /audience is not/);
    const wrongKey = await signWithServiceKey(fed.ours, outsideClaims());
    expectOAuthError(await grant({ assertion: wrongKey }), 400, 'invalid_grant', /not in the issuer's key set/);
  });

  it('refuses an application the policy does not list (invalid_grant)', async () => {
    const other = await createApplication(fed.ours, 'MachineToMachine');
    expectOAuthError(
      await grant({ assertion: fed.outsideToken }, other),
      400,
      'invalid_grant',
      new RegExp(`does not list application ${other.id}`),
    );
  });

  it('refuses an unknown resource and the management API (invalid_target)', async () => {
    expectOAuthError(
      await grant({ assertion: fed.outsideToken, resource: 'https://unknown.example.com' }),
      400,
      'invalid_target',
    );
    expectOAuthError(
      await grant({ assertion: fed.outsideToken, resource: fed.ours.config.managementApiResource }),
      400,
      'invalid_target',
      /management API/,
    );
  });

  it('audits each grant, granted and refused, with the trust policy used', async () => {
    const other = await createApplication(fed.ours, 'MachineToMachine');
    expectOAuthError(await grant({ assertion: fed.outsideToken }, other), 400, 'invalid_grant');
    const refused = await waitForLog(
      fed.ours,
      { logKey: 'ExchangeTokenBy.JwtBearer', applicationId: other.id },
      (entry) => entry.payload.result === 'Error',
    );
    expect(refused.payload.error.error).to.equal('invalid_grant');
    expect(refused.payload.params.resource).to.equal(fed.setup.apiB.resource.indicator);

    expectIssued(await grant({ assertion: await freshAssertion() }));
    const granted = await waitForLog(
      fed.ours,
      { logKey: 'ExchangeTokenBy.JwtBearer', applicationId: fed.setup.backend.id },
      (entry) => entry.payload.result === 'Success',
    );
    expect(granted.payload.params).to.deep.include({ trustedIssuerId: fed.policy.id, scopesIssued: [] });
  });
});
