/**
 * The baseline: bare oidc-provider with its memory adapter, one static client and one resource,
 * issuing client-credentials JWTs with the same algorithm as the service (ES256).
 */
import { exportJWK, generateKeyPair } from 'jose';
import { Provider } from 'oidc-provider';

import { baselineClient, baselineResource } from './fixtures.ts';

const port = Number(process.env.PORT ?? 3100);
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: baselineClient.id,
      client_secret: baselineClient.secret,
      grant_types: ['client_credentials'],
      id_token_signed_response_alg: 'ES256',
      response_types: [],
      redirect_uris: [],
    },
  ],
  jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'bench' }] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      getResourceServerInfo: () => ({
        scope: 'read write',
        audience: baselineResource,
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.listen(port);
// Exit on SIGTERM through process.exit, which writes the CPU profile when one is asked for (BENCH_PROFILE).
process.once('SIGTERM', () => process.exit(0));
