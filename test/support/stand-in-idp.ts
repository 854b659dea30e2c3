import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';

/**
 * Local HTTP servers that answer like an identity provider while a connector is saved (it must
 * answer then) and can be closed to play one that has gone away by the time a user signs in.
 */
export type StandIn = { url: string; close(): Promise<void> };

async function serve(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<StandIn> {
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * An OpenID issuer at `${url}/oidc` that answers its discovery document and its keys, and refuses
 * everything else with 400 (as an endpoint asked without a sign-in's parameters does).
 */
export async function startStandInIssuer(): Promise<StandIn & { issuer: string }> {
  const { publicKey } = await generateKeyPair('ES256');
  const keys = { keys: [{ ...(await exportJWK(publicKey)), kid: 'stand-in', use: 'sig', alg: 'ES256' }] };
  let issuer = '';
  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const standIn = await serve((request, response) => {
    if (request.url === '/oidc/.well-known/openid-configuration') {
      json(response, 200, {
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
      });
    } else if (request.url === '/oidc/jwks') {
      json(response, 200, keys);
    } else {
      json(response, 400, { error: 'invalid_request' });
    }
  });
  issuer = `${standIn.url}/oidc`;
  return { ...standIn, issuer };
}

/** Forwards every request to `origin` (method, path, headers, body, answer) until closed. */
export function startForwarder(origin: string): Promise<StandIn> {
  return serve((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0] !== 'host',
        ),
      );
      fetch(`${origin}${request.url ?? '/'}`, {
        method: request.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
        redirect: 'manual',
      })
        .then(async (answer) => {
          const body = Buffer.from(await answer.arrayBuffer());
          const type = answer.headers.get('content-type');
          response.writeHead(answer.status, type ? { 'content-type': type } : {}).end(body);
        })
        .catch(() => response.writeHead(502).end());
    });
  });
}
