/**
 * API B, the downstream API: it accepts only access tokens the identity service issued for it, and
 * checks them the way the specification lists — signature against the service's JWKS, `iss`, `aud`
 * equal to its own resource indicator, `exp`, the scopes each route needs — then takes `sub` as the
 * user and, optionally, only lets the upstream services it trusts (`client_id`) delegate.
 * It describes itself (RFC 9728) at `/.well-known/oauth-protected-resource`, and its 401s point there,
 * so that a client (an AI agent, an MCP client) finds the authorization server to get a token from.
 *
 *   ISSUER=http://localhost:3001/oidc API_B_INDICATOR=https://api-b.example.com PORT=4002 \
 *     node --import tsx examples/api-b/server.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

export type ApiBOptions = {
  issuer: string;
  indicator: string;
  allowedClientIds?: string[];
  /** Where clients reach API B, if not at its indicator (a local run): its metadata's address is under it. */
  publicUrl?: string;
};

/** The scope each route needs. */
const routes: Record<string, string> = { 'GET /orders': 'read:b', 'POST /orders': 'write:b' };

export const protectedResourceMetadataPath = '/.well-known/oauth-protected-resource';

export function createApiB({ issuer, indicator, allowedClientIds, publicUrl = indicator }: ApiBOptions): Server {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  // RFC 9728 §5.1: a 401 names the metadata, from which a client learns which authorization server to ask.
  const challenge = (error: string) =>
    `Bearer error="${error}", resource_metadata="${new URL(protectedResourceMetadataPath, publicUrl).href}"`;
  const metadata = {
    resource: indicator,
    authorization_servers: [issuer],
    scopes_supported: [...new Set(Object.values(routes))],
    bearer_methods_supported: ['header'],
    resource_name: 'API B (orders)',
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
    const [type, token] = (request.headers.authorization ?? '').split(' ');
    if (type !== 'Bearer' || !token) {
      send(
        401,
        { error: 'invalid_token', error_description: 'a Bearer access token is required' },
        { 'www-authenticate': challenge('invalid_token') },
      );
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
      send(
        401,
        { error: 'invalid_token', error_description: (error as Error).message },
        { 'www-authenticate': challenge('invalid_token') },
      );
      return;
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
      scopes,
      route: `${request.method} ${request.url}`,
    });
  }
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
