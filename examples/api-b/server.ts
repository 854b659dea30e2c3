/**
 * API B, the downstream API: it accepts only access tokens the identity service issued for it, and
 * checks them the way the specification lists — signature against the service's JWKS, `iss`, `aud`
 * equal to its own resource indicator, `exp`, the scopes each route needs — then takes `sub` as the
 * user and, optionally, only lets the upstream services it trusts (`client_id`) delegate.
 *
 *   ISSUER=http://localhost:3001/oidc API_B_INDICATOR=https://api-b.example.com PORT=4002 \
 *     node --import tsx examples/api-b/server.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

export type ApiBOptions = { issuer: string; indicator: string; allowedClientIds?: string[] };

/** The scope each route needs. */
const routes: Record<string, string> = { 'GET /orders': 'read:b', 'POST /orders': 'write:b' };

export function createApiB({ issuer, indicator, allowedClientIds }: ApiBOptions): Server {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));

  return createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    answer(request, send).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
      } else {
        send(500, { error: 'server_error', error_description: (error as Error).message });
      }
    });
  });

  async function answer(request: IncomingMessage, send: (status: number, body: unknown) => void): Promise<void> {
    const needed = routes[`${request.method} ${request.url}`];
    if (!needed) {
      send(404, { error: 'not_found' });
      return;
    }
    const [type, token] = (request.headers.authorization ?? '').split(' ');
    if (type !== 'Bearer' || !token) {
      send(401, { error: 'invalid_token', error_description: 'a Bearer access token is required' });
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
      send(401, { error: 'invalid_token', error_description: (error as Error).message });
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
  } = process.env;
  createApiB({ issuer: ISSUER, indicator: API_B_INDICATOR, allowedClientIds: ALLOWED_CLIENT_IDS?.split(',') }).listen(
    Number(PORT),
    () => console.log(`API B on http://localhost:${PORT}, audience ${API_B_INDICATOR}`),
  );
}
