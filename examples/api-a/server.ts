/**
 * API A, the backend that holds a user's token: it exchanges it at the identity service for a token
 * whose audience is API B (RFC 8693), keeping the user as `sub`, and calls API B with that — never
 * forwarding the user's own token.
 *
 *   ISSUER=http://localhost:3001/oidc API_A_CLIENT_ID=... API_A_CLIENT_SECRET=... \
 *   API_B_URL=http://localhost:4002 API_B_INDICATOR=https://api-b.example.com PORT=4001 \
 *     node --import tsx examples/api-a/server.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export type ApiAOptions = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  apiBUrl: string;
  apiBIndicator: string;
};

/** The exchange itself: one form POST to the token endpoint, authenticated with HTTP Basic. */
export async function exchangeForApiB(options: ApiAOptions, userToken: string, scope: string) {
  const response = await fetch(`${options.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: userToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: options.apiBIndicator,
      scope,
    }),
  });
  return {
    status: response.status,
    body: (await response.json()) as { access_token?: string; error?: string; error_description?: string },
  };
}

export function createApiA(options: ApiAOptions): Server {
  return createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    // The identity service or API B unreachable (or answering other than JSON): say so, stay up.
    answer(options, request, send).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
      } else {
        send(502, { error: 'upstream_failed', error_description: (error as Error).message });
      }
    });
  });
}

async function answer(
  options: ApiAOptions,
  request: IncomingMessage,
  send: (status: number, body: unknown) => void,
): Promise<void> {
  if (request.method !== 'GET' || request.url !== '/my-orders') {
    send(404, { error: 'not_found' });
    return;
  }
  // API A checks the user's token for itself as API B does (omitted here: see examples/api-b).
  const userToken = (request.headers.authorization ?? '').replace(/^Bearer /, '');
  const exchanged = await exchangeForApiB(options, userToken, 'read:b');
  if (!exchanged.body.access_token) {
    send(502, { error: 'exchange_failed', detail: exchanged.body });
    return;
  }
  const downstream = await fetch(`${options.apiBUrl}/orders`, {
    headers: { authorization: `Bearer ${exchanged.body.access_token}` },
  });
  send(downstream.status, { fromApiB: (await downstream.json()) as unknown });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const env = process.env;
  const options: ApiAOptions = {
    issuer: env.ISSUER ?? 'http://localhost:3001/oidc',
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
