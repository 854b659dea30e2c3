/**
 * An outside issuer for the token-exchange-outside-issuer scenario: an ES256 key of its own, whose
 * public half this process serves as a JWK set over HTTP (a real fetch by the service, through its
 * SSRF guard), and a JWT it signs for one of the service's users. The service fetches the set once
 * and keeps it (docs/token-exchange.md), so serving it from the bench process does not disturb the load.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export type OutsideIssuer = {
  issuer: string;
  jwksUri: string;
  /** A JWT of this issuer for `audience`, naming the user by `email`, valid for a day. */
  sign(audience: string, email: string): Promise<string>;
  stop(): Promise<void>;
};

const kid = 'bench-outside';

export async function startOutsideIssuer(): Promise<OutsideIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig', kid }] });
  const server = createServer((request, response) => {
    if (request.url === '/jwks') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    } else {
      response.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/issuer`;
  return {
    issuer,
    jwksUri: `${base}/jwks`,
    sign: (audience, email) =>
      new SignJWT({ email, email_verified: true })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject('partner-user-1')
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('1d')
        .sign(privateKey),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
