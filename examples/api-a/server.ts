/**
 * API A, the backend that holds a user's token: it checks that token as its own API's (signature,
 * issuer, audience API A, expiry), then exchanges it at the identity service with openid-client for
 * a token whose audience is API B (RFC 8693), keeping the user as `sub`, and calls API B with that —
 * never forwarding the user's own token. A bad token is the caller's fault: 401, not 502.
 *
 * Beside the plain exchange, three things it may do:
 * - **An agent as actor.** An agent calling for the user sends, beside the user's token, its own
 *   access token (client credentials, audience API A) in the `Actor-Token` header. API A checks it
 *   as its own API's token too and names it as `actor_token`, so the token for API B carries
 *   `act`: API B sees the user (`sub`), API A (`client_id`) and the agent (`act`). The service's
 *   refusal of that actor for this user (`may_act`, the delegation policy) is answered 403.
 * - **Users of a partner's identity provider** (`OUTSIDE_ISSUERS`, comma-separated issuer URLs, each
 *   also a trusted outside issuer at the identity service): their tokens are checked against the
 *   issuer's keys (`jwks_uri` of its discovery document) with the audience `OUTSIDE_AUDIENCE`
 *   (default `API_A_INDICATOR`), and exchanged as `urn:ietf:params:oauth:token-type:jwt`.
 * - **DPoP** (`DPOP=1`): API A makes an ES256 key at start and proves it on the exchange, so the token
 *   for API B is bound to it (`cnf.jkt`, RFC 9449) and useless to anyone who copies it; API B gets it
 *   as `Authorization: DPoP <token>` with a fresh proof.
 *
 *   ISSUER=http://localhost:3001/oidc API_A_INDICATOR=https://api-a.example.com \
 *   API_A_CLIENT_ID=... API_A_CLIENT_SECRET=... \
 *   API_B_URL=http://localhost:4002 API_B_INDICATOR=https://api-b.example.com PORT=4001 \
 *   [OUTSIDE_ISSUERS=http://localhost:3002/oidc OUTSIDE_AUDIENCE=...] [DPOP=1] \
 *     node --import tsx examples/api-a/server.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as client from 'openid-client';

export type ApiAOptions = {
  issuer: string;
  /** API A's own resource indicator: the audience of the tokens its callers send. */
  apiAIndicator: string;
  clientId: string;
  clientSecret: string;
  apiBUrl: string;
  apiBIndicator: string;
  /** Issuers besides ours whose users' tokens API A accepts; the identity service must trust them too. */
  outsideIssuers?: string[];
  /** The audience those issuers give tokens for API A (their policy's `audience` at the service). */
  outsideAudience?: string;
  /** Bind the tokens for API B to API A's own key (RFC 9449). */
  dpop?: boolean;
};

/** Where an agent calling for the user sends its own access token. No standard names one. */
export const actorTokenHeader = 'actor-token';

const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
const jwtTokenType = 'urn:ietf:params:oauth:token-type:jwt';

/** The token endpoint's refusals of what the caller sent (RFC 8693 §2.2.2). */
const refusesTheCaller = new Set(['invalid_request', 'invalid_grant']);
/** A refusal whose description blames one of the caller's tokens; any other, with an actor, refuses the actor. */
const blamesAToken = /^(subject_token|actor_token)\b/;

type KeySet = ReturnType<typeof createRemoteJWKSet>;
/** An issuer whose tokens API A accepts: how it checks them and how it names them in the exchange. */
type Trusted = { keys: () => Promise<KeySet>; audience: string; typ?: string; tokenType: string };

/** The caller's fault: 401 (a token is no good) or 403 (the actor may not act for this user). Anything else is 502. */
class Refused extends Error {
  readonly status: 401 | 403;

  constructor(status: 401 | 403, message: string) {
    super(message);
    this.status = status;
  }
}

/** Made on first use and kept; a failure is not kept, so the next request tries again. */
function lazily<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () =>
    (value ??= make().catch((error: unknown) => {
      value = undefined;
      throw error;
    }));
}

/** OpenID Connect Discovery §4.3: the metadata must name the issuer asked for, or its keys are not that issuer's. */
async function discoveredKeys(issuer: string): Promise<KeySet> {
  const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  if (!response.ok || metadata.issuer !== issuer || typeof metadata.jwks_uri !== 'string') {
    throw new Error(`the discovery document of ${issuer} names no key set of its own`);
  }
  return createRemoteJWKSet(new URL(metadata.jwks_uri));
}

/** The token checked as one for API A by the issuer it names, which is returned. */
async function verify(token: string, issuers: Map<string, Trusted>, what: string): Promise<Trusted> {
  let issuer: string | undefined;
  try {
    issuer = decodeJwt(token).iss;
  } catch (error) {
    throw new Refused(401, `${what}: ${(error as Error).message}`);
  }
  const from = issuer === undefined ? undefined : issuers.get(issuer);
  if (!from) {
    throw new Refused(401, `${what}: tokens of issuer ${String(issuer)} are not accepted here`);
  }
  // Outside the try: an issuer whose keys cannot be had is no fault of the caller's (502).
  const keys = await from.keys();
  try {
    await jwtVerify(token, keys, { issuer, audience: from.audience, typ: from.typ, clockTolerance: 5 });
  } catch (error) {
    throw new Refused(401, `${what}: ${(error as Error).message}`);
  }
  return from;
}

export function createApiA(options: ApiAOptions): Server {
  const ourKeys = createRemoteJWKSet(new URL(`${options.issuer}/jwks`));
  const ours = new Map<string, Trusted>([
    [
      options.issuer,
      {
        keys: () => Promise.resolve(ourKeys),
        audience: options.apiAIndicator,
        typ: 'at+jwt',
        tokenType: accessTokenType,
      },
    ],
  ]);
  const users = new Map(ours);
  for (const issuer of options.outsideIssuers ?? []) {
    // Another issuer's access tokens need not be RFC 9068's (no `typ` required); its audience is what it calls API A.
    users.set(issuer, {
      keys: lazily(() => discoveredKeys(issuer)),
      audience: options.outsideAudience ?? options.apiAIndicator,
      tokenType: jwtTokenType,
    });
  }
  const dpopKey = options.dpop ? client.randomDPoPKeyPair('ES256') : undefined;
  // Discovery once, on first use; a plain-http issuer is a local run.
  const oidc = lazily(async () => {
    const config = await client.discovery(new URL(options.issuer), options.clientId, options.clientSecret, undefined, {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: allowed for a local http issuer
      execute: options.issuer.startsWith('http://') ? [client.allowInsecureRequests] : [],
    });
    return { config, dpop: dpopKey && client.getDPoPHandle(config, await dpopKey) };
  });

  /** RFC 8693 exchange for API B, by openid-client; with DPoP on, its proof binds the token to API A's key. */
  async function exchangeForApiB(subject: string, subjectType: string, actor: string | undefined) {
    const { config, dpop } = await oidc();
    try {
      return await client.genericGrantRequest(
        config,
        tokenExchange,
        {
          subject_token: subject,
          subject_token_type: subjectType,
          resource: options.apiBIndicator,
          scope: 'read:b',
          ...(actor && { actor_token: actor, actor_token_type: accessTokenType }),
        },
        { DPoP: dpop },
      );
    } catch (error) {
      // Verified tokens the service still refuses (revoked, a suspended user, an actor it does not allow).
      if (error instanceof client.ResponseBodyError && refusesTheCaller.has(error.error)) {
        const description = error.error_description ?? error.error;
        throw new Refused(actor && !blamesAToken.test(description) ? 403 : 401, description);
      }
      throw error;
    }
  }

  /** RFC 9449 §7.1: a bound token goes with the DPoP scheme and a fresh proof of this request, as openid-client sends it. */
  async function callApiB(exchanged: client.TokenEndpointResponse): Promise<Response> {
    const { config, dpop } = await oidc();
    try {
      return await client.fetchProtectedResource(
        config,
        exchanged.access_token,
        new URL(`${options.apiBUrl}/orders`),
        'GET',
        undefined,
        undefined,
        { DPoP: exchanged.token_type === 'dpop' ? dpop : undefined },
      );
    } catch (error) {
      // openid-client raises a 401 with a challenge; it is still API B's answer, passed on as the others.
      if (error instanceof client.WWWAuthenticateChallengeError) {
        return error.response;
      }
      throw error;
    }
  }

  async function answer(request: IncomingMessage): Promise<{ status: number; body: unknown }> {
    if (request.method !== 'GET' || request.url !== '/my-orders') {
      return { status: 404, body: { error: 'not_found' } };
    }
    const [type, userToken] = (request.headers.authorization ?? '').split(' ');
    if (type !== 'Bearer' || !userToken) {
      throw new Refused(401, 'a Bearer access token is required');
    }
    const subject = await verify(userToken, users, 'the Bearer token');
    const actorToken = request.headers[actorTokenHeader];
    if (Array.isArray(actorToken)) {
      throw new Refused(401, `one ${actorTokenHeader} header at most`);
    }
    // The agent's token is one of ours for API A, as any caller's: a token for another API may not act here.
    if (actorToken !== undefined) {
      await verify(actorToken, ours, actorTokenHeader);
    }
    const exchanged = await exchangeForApiB(userToken, subject.tokenType, actorToken);
    const downstream = await callApiB(exchanged);
    return { status: downstream.status, body: { fromApiB: (await downstream.json()) as unknown } };
  }

  return createServer((request, response) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    answer(request).then(
      ({ status, body }) => {
        send(status, body);
      },
      (error: unknown) => {
        if (response.headersSent) {
          response.destroy();
        } else if (error instanceof Refused && error.status === 401) {
          send(
            401,
            { error: 'invalid_token', error_description: error.message },
            { 'www-authenticate': 'Bearer error="invalid_token"' },
          );
        } else if (error instanceof Refused) {
          send(403, { error: 'forbidden', error_description: error.message });
        } else {
          // The identity service, an outside issuer or API B unreachable (or answering other than JSON): say so, stay up.
          send(502, { error: 'upstream_failed', error_description: (error as Error).message });
        }
      },
    );
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const env = process.env;
  const options: ApiAOptions = {
    issuer: env.ISSUER ?? 'http://localhost:3001/oidc',
    apiAIndicator: env.API_A_INDICATOR ?? 'https://api-a.example.com',
    clientId: env.API_A_CLIENT_ID ?? '',
    clientSecret: env.API_A_CLIENT_SECRET ?? '',
    apiBUrl: env.API_B_URL ?? 'http://localhost:4002',
    apiBIndicator: env.API_B_INDICATOR ?? 'https://api-b.example.com',
    outsideIssuers: env.OUTSIDE_ISSUERS?.split(',').filter(Boolean),
    outsideAudience: env.OUTSIDE_AUDIENCE,
    dpop: env.DPOP === '1',
  };
  const port = Number(env.PORT ?? 4001);
  createApiA(options).listen(port, () =>
    console.log(
      `API A on http://localhost:${port}: GET /my-orders with a user's Bearer token` +
        ` (and an agent's in ${actorTokenHeader})${options.dpop ? ', DPoP-bound calls to API B' : ''}`,
    ),
  );
}
