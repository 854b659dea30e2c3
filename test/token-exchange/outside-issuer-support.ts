import { expect } from 'chai';

import { startService } from '../support/service.ts';
import { delegationSetup, userAccessToken } from './support.ts';

/**
 * Two instances of the service: `ours`, where API A's backend exchanges tokens for API B, and
 * `outside`, another identity service whose users sign in at its own front end for its API. `ours`
 * trusts `outside` through a policy for `ours.backend`, requiring the outside API's indicator as audience.
 */
export async function federationSetup() {
  const ours = await startService();
  const outside = await startService();
  const setup = await delegationSetup(ours);
  const far = await delegationSetup(outside);
  const outsideToken = await userAccessToken(outside, far.frontend.id, far.user, far.apiA.resource.indicator);
  const created = await ours.api.post('trusted-issuers', {
    json: {
      name: 'the partner',
      issuer: `${outside.url}/oidc`,
      jwksUri: `${outside.url}/oidc/jwks`,
      audience: far.apiA.resource.indicator,
      algorithms: ['ES256'],
      userMapping: { claim: 'sub', by: 'jit' },
      applicationIds: [setup.backend.id],
    },
  });
  expect(created.statusCode, JSON.stringify(created.body)).to.equal(201);
  return { ours, outside, setup, far, outsideToken, policy: created.body };
}

export type Federation = Awaited<ReturnType<typeof federationSetup>>;

/** Stops both instances (as far as the setup got). */
export async function stopFederation(fed: Federation | undefined): Promise<void> {
  await fed?.ours.stop();
  await fed?.outside.stop();
}
