/**
 * API A, the backend that holds a user's token: it checks that token as its own API's (signature,
 * issuer, audience API A, expiry), then exchanges it at the identity service with openid-client for
 * a token whose audience is API B (RFC 8693), keeping the user as `sub`, and calls API B with that —
 * never forwarding the user's own token. A bad token is the caller's fault: 401, not 502.
 *
 *   ISSUER=http://localhost:3001/oidc API_A_INDICATOR=https://api-a.example.com \
 *   API_A_CLIENT_ID=... API_A_CLIENT_SECRET=... \
 *   API_B_URL=http://localhost:4002 API_B_INDICATOR=https://api-b.example.com PORT=4001 \
 *     node --import tsx examples/api-a/server.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';

export type ApiAOptions = {
  issuer: string;
  /** API A's own resource indicator: the audience of the tokens its callers send. */
  apiAIndicator: string;
  clientId: string;
  clientSecret: string;
  apiBUrl: string;
  apiBIndicator: string;
};

const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/** The token endpoint's refusals of the subject token itself (RFC 8693 §2.2.2): the caller's token is no good. */
const refusesTheToken = new Set(['invalid_request', 'invalid_grant']);

type Send = (status: number, body: unknown, headers?: Record<string, string>) => void;

export function createApiA(options: ApiAOptions): Server {
  const jwks = createRemoteJWKSet(new URL(`${options.issuer}/jwks`));
  // Discovery once, on first use; a plain-http issuer is a local run.
  let configuration: Promise<client.Configuration> | undefined;
  const oidc = () =>
    (configuration ??= client
      .discovery(new URL(options.issuer), options.clientId, options.clientSecret, undefined, {
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: allowed for a local http issuer
        execute: options.issuer.startsWith('http://') ? [client.allowInsecureRequests] : [],
      })
      .catch((error: unknown) => {
        configuration = undefined;
        throw error;
      }));

  /** RFC 8693 exchange for API B, by openid-client. */
  const exchangeForApiB = async (userToken: string, scope: string) =>
    client.genericGrantRequest(await oidc(), tokenExchange, {
      subject_token: userToken,
      subject_token_type: accessTokenType,
      resource: options.apiBIndicator,
      scope,
    });

  async function answer(request: IncomingMessage, send: Send): Promise<void> {
    if (request.method !== 'GET' || request.url !== '/my-orders') {
      send(404, { error: 'not_found' });
      return;
    }
    const unauthorized = (description: string) =>
      send(
        401,
        { error: 'invalid_token', error_description: description },
        {
          'www-authenticate': 'Bearer error="invalid_token"',
        },
      );
    const [type, userToken] = (request.headers.authorization ?? '').split(' ');
    if (type !== 'Bearer' || !userToken) {
      unauthorized('a Bearer access token is required');
      return;
    }
    try {
      await jwtVerify(userToken, jwks, {
        issuer: options.issuer,
        audience: options.apiAIndicator,
        typ: 'at+jwt',
        clockTolerance: 5,
      });
    } catch (error) {
      unauthorized((error as Error).message);
      return;
    }
    let exchanged: client.TokenEndpointResponse;
    try {
      exchanged = await exchangeForApiB(userToken, 'read:b');
    } catch (error) {
      // A token that verified but cannot be exchanged (revoked, its user suspended): still the caller's.
      if (error instanceof client.ResponseBodyError && refusesTheToken.has(error.error)) {
        unauthorized(error.error_description ?? error.error);
        return;
      }
      throw error;
    }
    const downstream = await fetch(`${options.apiBUrl}/orders`, {
      headers: { authorization: `Bearer ${exchanged.access_token}` },
    });
    send(downstream.status, { fromApiB: (await downstream.json()) as unknown });
  }

  return createServer((request, response) => {
    const send: Send = (status, body, headers = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    // The identity service or API B unreachable (or answering other than JSON): say so, stay up.
    answer(request, send).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
      } else {
        send(502, { error: 'upstream_failed', error_description: (error as Error).message });
      }
    });
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
  };
  const port = Number(env.PORT ?? 4001);
  createApiA(options).listen(port, () =>
    console.log(`API A on http://localhost:${port}: GET /my-orders with a user's Bearer token`),
  );
}
