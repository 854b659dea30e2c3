/**
 * API B, the downstream API: it accepts only access tokens the identity service issued for it, and
 * checks them the way the specification lists — signature against the service's JWKS, `iss`, `aud`
 * equal to its own resource indicator, `exp`, the scopes each route needs — then takes `sub` as the
 * user and, optionally, only lets the upstream services it trusts (`client_id`) delegate. Its answer
 * shows who is served (`user`), who called (`calledBy`) and, when an agent acted, the actor (`act`).
 * A token bound to a key (`cnf.jkt`, RFC 9449) is good only as `Authorization: DPoP <token>` with a
 * proof of that key for the request (`dpop.ts`); unbound tokens stay plain Bearer tokens.
 * It describes itself (RFC 9728) at `/.well-known/oauth-protected-resource`, and its 401s point there,
 * so that a client (an AI agent, an MCP client) finds the authorization server to get a token from.
 *
 *   ISSUER=http://localhost:3001/oidc API_B_INDICATOR=https://api-b.example.com PORT=4002 \
 *   [ALLOWED_CLIENT_IDS=<API A's application id>,...] [API_B_PUBLIC_URL=http://localhost:4002] \
 *     node --import tsx examples/api-b/server.ts
 *
 * API_B_PUBLIC_URL is where clients reach it (default `http://localhost:$PORT`): DPoP proofs name that URL.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

import { dpopAlgorithms, dpopProofChecker, DpopRefused } from './dpop.ts';

export type ApiBOptions = {
  issuer: string;
  indicator: string;
  allowedClientIds?: string[];
  /** Where clients reach API B, if not at its indicator (a local run): its metadata and proofs' `htu` are there. */
  publicUrl?: string;
};

/** The scope each route needs. */
const routes: Record<string, string> = { 'GET /orders': 'read:b', 'POST /orders': 'write:b' };

type Scheme = 'Bearer' | 'DPoP';
/** Authentication schemes are case-insensitive (RFC 9110 §11.1). */
const schemes: Record<string, Scheme | undefined> = { bearer: 'Bearer', dpop: 'DPoP' };

export const protectedResourceMetadataPath = '/.well-known/oauth-protected-resource';

export function createApiB({ issuer, indicator, allowedClientIds, publicUrl = indicator }: ApiBOptions): Server {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const checkProof = dpopProofChecker();
  // RFC 9728 §5.1: a 401 names the metadata, from which a client learns which authorization server to ask;
  // RFC 9449 §7.1: a DPoP challenge names the proofs' algorithms.
  const metadataUrl = new URL(protectedResourceMetadataPath, publicUrl).href;
  const challenge = (scheme: Scheme, error: string) => {
    const algs = scheme === 'DPoP' ? ` algs="${dpopAlgorithms.join(' ')}",` : '';
    return `${scheme} error="${error}",${algs} resource_metadata="${metadataUrl}"`;
  };
  const metadata = {
    resource: indicator,
    authorization_servers: [issuer],
    scopes_supported: [...new Set(Object.values(routes))],
    bearer_methods_supported: ['header'],
    resource_name: 'API B (orders)',
    // Bound tokens are taken, and proved; unbound ones too.
    dpop_signing_alg_values_supported: dpopAlgorithms,
    dpop_bound_access_tokens_required: false,
  };

  return createServer((request, response) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    answer(request, send).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
      } else {
        send(500, { error: 'server_error', error_description: (error as Error).message });
      }
    });
  });

  async function answer(
    request: IncomingMessage,
    send: (status: number, body: unknown, headers?: Record<string, string>) => void,
  ): Promise<void> {
    if (request.method === 'GET' && request.url === protectedResourceMetadataPath) {
      send(200, metadata);
      return;
    }
    const needed = routes[`${request.method} ${request.url}`];
    if (!needed) {
      send(404, { error: 'not_found' });
      return;
    }
    const refuse = (scheme: Scheme, error: string, description: string) => {
      send(401, { error, error_description: description }, { 'www-authenticate': challenge(scheme, error) });
    };
    const [type, token] = (request.headers.authorization ?? '').split(' ');
    const scheme = schemes[type.toLowerCase()];
    if (!scheme || !token) {
      refuse('Bearer', 'invalid_token', 'a Bearer or DPoP access token is required');
      return;
    }
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, jwks, {
        issuer,
        audience: indicator,
        typ: 'at+jwt',
        clockTolerance: 5,
      }));
    } catch (error) {
      refuse(scheme, 'invalid_token', (error as Error).message);
      return;
    }
    const jkt = boundKey(claims);
    // RFC 9449 §7.2: a bound token sent as Bearer is refused, or a thief could drop the proof.
    if (jkt === undefined ? scheme === 'DPoP' : scheme === 'Bearer') {
      const description =
        jkt === undefined
          ? 'the token is not DPoP-bound: send it as a Bearer token'
          : 'the token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof';
      refuse('DPoP', 'invalid_token', description);
      return;
    }
    if (jkt !== undefined) {
      const url = new URL(request.url ?? '/', publicUrl);
      try {
        await checkProof(request.headers.dpop, { method: request.method ?? '', url }, token, jkt);
      } catch (error) {
        if (error instanceof DpopRefused) {
          refuse('DPoP', error.error, error.message);
          return;
        }
        throw error;
      }
    }
    const scopes = (typeof claims.scope === 'string' ? claims.scope : '').split(' ');
    if (!scopes.includes(needed)) {
      send(403, { error: 'insufficient_scope', error_description: `this route needs ${needed}` });
      return;
    }
    if (allowedClientIds && !allowedClientIds.includes(String(claims.client_id))) {
      send(403, {
        error: 'forbidden',
        error_description: "this upstream service may not call on a user's behalf",
      });
      return;
    }
    send(200, {
      user: claims.sub,
      calledBy: claims.client_id,
      ...(claims.act !== undefined && { act: claims.act }),
      ...(jkt !== undefined && { cnf: { jkt } }),
      scopes,
      route: `${request.method} ${request.url}`,
    });
  }
}

/** The thumbprint of the key the token is bound to (RFC 9449 §6.1), if it is bound. */
function boundKey(claims: JWTPayload): string | undefined {
  const { cnf } = claims as { cnf?: { jkt?: unknown } };
  return typeof cnf?.jkt === 'string' ? cnf.jkt : undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const {
    ISSUER = 'http://localhost:3001/oidc',
    API_B_INDICATOR = 'https://api-b.example.com',
    PORT = '4002',
    ALLOWED_CLIENT_IDS,
    API_B_PUBLIC_URL = `http://localhost:${PORT}`,
  } = process.env;
  createApiB({
    issuer: ISSUER,
    indicator: API_B_INDICATOR,
    allowedClientIds: ALLOWED_CLIENT_IDS?.split(','),
    publicUrl: API_B_PUBLIC_URL,
  }).listen(Number(PORT), () => console.log(`API B on http://localhost:${PORT}, audience ${API_B_INDICATOR}`));
}
