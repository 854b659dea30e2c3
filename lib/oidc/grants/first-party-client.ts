import { errors } from 'oidc-provider';

import { findApplication } from '../../applications/queries.ts';
import { type Application, confidentialTypes } from '../../applications/schemas.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';

/** The application behind an authenticated client, from memory. */
export const applicationLookup = (db: Queryable, cache: SharedCache) => (clientId: string) =>
  cache.get('applications', `application:${clientId}`, () => findApplication(db, clientId));

/**
 * The grants that hand out a user's tokens without the user at hand (token exchange, the JWT bearer
 * grant) are for the tenant's own confidential applications: a public client cannot keep the secret
 * that proves it is the one allowed (RFC 8693 §2.1), and a third party acts only with the user's
 * consent, which these grants never ask (Logto's rule, in its words). One rule for both grants.
 */
export function assertFirstPartyConfidential(application: Application | undefined, refusal: string): Application {
  if (application?.isThirdParty) {
    throw new errors.UnauthorizedClient('third-party applications are not allowed for this grant type');
  }
  if (!application || !confidentialTypes.has(application.type)) {
    throw new errors.UnauthorizedClient(refusal);
  }
  return application;
}
