import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  calculateJwkThumbprint,
  type CryptoKey,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTHeaderParameters,
  type JWTPayload,
  SignJWT,
} from 'jose';

import { openDatabase } from '../../lib/storage/database.ts';
import { Browser } from '../experience/browser.ts';
import { eventually } from '../support/eventually.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import type { Json, ServiceClient, TestService } from '../support/service.ts';
import { submitPasswordSignIn } from '../support/sign-in.ts';
import { unique } from '../support/values.ts';

const redirectUri = 'http://frontend.test/callback';

/**
 * The delegation setting of the specification: API A and API B as resources, B's permissions held
 * by a user through a role, a front end that signs the user in for API A, and API A's backend
 * application allowed to exchange.
 */
export async function delegationSetup(service: ServiceClient) {
  const apiA = await createResource(service, ['read:a']);
  const apiB = await createResource(service, ['read:b', 'write:b', 'delete:b'], 900);
  const role = (
    await service.api.post('roles', {
      json: {
        name: `b-user-${Date.now()}-${Math.random()}`,
        description: 'reads and writes B',
        scopeIds: [apiB.scopeIds['read:b'], apiB.scopeIds['write:b'], apiA.scopeIds['read:a']],
      },
    })
  ).body;
  const username = unique('user');
  const password = 'Sturdy-Tulip-7';
  const user = (await service.api.post('users', { json: { username, password } })).body;
  await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.id] } });
  const frontend = await createApplication(service, 'SPA', {
    oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
  });
  const backend = await createApplication(service, 'Traditional', {
    oidcClientMetadata: { redirectUris: ['http://api-a.test/callback'], postLogoutRedirectUris: [] },
    customClientMetadata: { allowTokenExchange: true },
  });
  return { apiA, apiB, role, user: { ...user, username, password }, frontend, backend };
}

/** The user signs in at the front end; returns the token response (access token, ID token). */
export async function userTokens(
  service: ServiceClient,
  frontendId: string,
  user: { username: string; password: string },
  resource?: string,
  /** Extra headers for the code's redemption at the token endpoint (a `DPoP` proof). */
  headers: Record<string, string> = {},
): Promise<{ access_token: string; id_token: string; [key: string]: unknown }> {
  const browser = new Browser(service);
  const scope = resource ? 'openid read:a' : 'openid';
  const { verifier } = await browser.authorize(frontendId, redirectUri, { scope, ...(resource && { resource }) });
  const done = await submitPasswordSignIn(browser, user);
  const landed = await browser.followToApplication(done.body.redirectTo);
  const tokens = await service.http.post('oidc/token', {
    form: {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code')!,
      code_verifier: verifier,
      client_id: frontendId,
      redirect_uri: redirectUri,
      ...(resource && { resource }),
    },
    headers,
  });
  if (tokens.statusCode !== 200) {
    throw new Error(`sign-in failed: ${JSON.stringify(tokens.body)}`);
  }
  return tokens.body;
}

/** The user signs in at the front end, which gets an access token for API A (or an opaque one). */
export async function userAccessToken(
  service: ServiceClient,
  frontendId: string,
  user: { username: string; password: string },
  resource?: string,
): Promise<string> {
  return (await userTokens(service, frontendId, user, resource)).access_token;
}

/** A user of their own holding API B's role, signed in at the front end: its id and its token for API A. */
export async function userWithApiBRole(
  service: ServiceClient,
  setup: Awaited<ReturnType<typeof delegationSetup>>,
): Promise<{ id: string; token: string }> {
  const username = unique('u');
  const password = 'Sturdy-Tulip-7';
  const user = (await service.api.post('users', { json: { username, password } })).body as { id: string };
  expect(
    (await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [setup.role.id] } })).statusCode,
  ).to.equal(201);
  const token = await userAccessToken(
    service,
    setup.frontend.id,
    { username, password },
    setup.apiA.resource.indicator,
  );
  return { id: user.id, token };
}

export const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
export const impersonationTokenType = 'urn:logto:token-type:impersonation_token';

/** A token exchange by a confidential application (HTTP Basic). */
export const exchange = (
  service: ServiceClient,
  application: { id: string; secret: string },
  form: Record<string, string>,
) => service.token(application.id, application.secret, { grant_type: tokenExchange, ...form });

type OAuthResponse = { statusCode: number; headers: Record<string, string | string[] | undefined>; body: unknown };

/** An OAuth error response of the contract: status, `error`, `error_description`, `Cache-Control: no-store`. */
export function expectOAuthError(
  response: OAuthResponse,
  status: number,
  error: string,
  description?: string | RegExp,
): void {
  const body = response.body as { error?: unknown; error_description?: unknown };
  const shown = `${response.statusCode} ${JSON.stringify(response.body)}`;
  expect(response.statusCode, shown).to.equal(status);
  expect(body.error, shown).to.equal(error);
  expect(body.error_description, shown).to.be.a('string');
  if (typeof description === 'string') {
    expect(body.error_description, shown).to.equal(description);
  } else if (description) {
    expect(body.error_description, shown).to.match(description);
  }
  expect(String(response.headers['cache-control']), shown).to.include('no-store');
  expect(String(response.headers['content-type']), shown).to.match(/^application\/json/);
}

/** A successful exchange: 200 and the body, with `no-store`. */
export function expectIssued(response: OAuthResponse): {
  access_token: string;
  scope: string;
  expires_in: number;
  [key: string]: unknown;
} {
  expect(response.statusCode, `${response.statusCode} ${JSON.stringify(response.body)}`).to.equal(200);
  expect(String(response.headers['cache-control'])).to.include('no-store');
  return response.body as { access_token: string; scope: string; expires_in: number };
}

/** The claims of a JWT, unverified (the tests verify signatures where it matters). */
export const claimsOf = (token: string) => decodeJwt(token);

export type AuditEntry = {
  id: string;
  key: string;
  createdAt: number;
  payload: Record<string, Json>;
  names: Record<string, string>;
};

/** Audit log entries (newest first); writes are batched, so callers poll with `waitForLog`. */
export async function auditLog(
  service: TestService,
  query: Record<string, string | number> = {},
): Promise<AuditEntry[]> {
  const response = await service.api.get('logs', { searchParams: { page_size: 100, ...query } });
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
  return response.body as AuditEntry[];
}

/** Polls GET /api/logs until an entry matches (the audit log is written in batches), up to ~3 s. */
export function waitForLog(
  service: TestService,
  query: Record<string, string | number>,
  matches: (entry: AuditEntry) => boolean,
): Promise<AuditEntry> {
  return eventually(
    async () => (await auditLog(service, query)).find(matches),
    3000,
    `an audit entry of ${JSON.stringify(query)} that matches`,
  );
}

/**
 * Signs a JWT with the service's own EC signing key, read from its database: the only way a test
 * makes a well-signed token with claims the service would not issue (an expired one, another issuer).
 */
export async function signWithServiceKey(
  service: TestService,
  payload: JWTPayload,
  header: Partial<JWTHeaderParameters> = {},
): Promise<string> {
  const db = openDatabase(service.config.dbUrl);
  try {
    const row = await db('oidc_keys')
      .where({ kind: 'private-keys', algorithm: 'EC' })
      .whereNull('rotated_at')
      .first<{ value: string } | undefined>();
    if (!row) {
      throw new Error('no EC signing key in the database');
    }
    const jwk = JSON.parse(row.value) as JWK & { kid: string };
    const key = await importJWK(jwk, 'ES256');
    return await new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: jwk.kid, ...header })
      .sign(key);
  } finally {
    await db.destroy();
  }
}

/** A DPoP key pair (RFC 9449) and its thumbprint, as a client holds one. */
export type DpopKey = { privateKey: CryptoKey; publicKey: CryptoKey; jkt: string };

export async function dpopKey(): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, publicKey, jkt: await calculateJwkThumbprint(await exportJWK(publicKey)) };
}

/** An RFC 9449 proof for POST `htu`, made with jose. */
export async function dpopProof(key: DpopKey, htu: string, claims: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ htm: 'POST', htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(key.publicKey) })
    .sign(key.privateKey);
}
