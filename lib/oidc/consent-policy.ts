import type { Interaction } from 'oidc-provider';

import { findApplication } from '../applications/queries.ts';
import type { Queryable } from '../storage/database.ts';

/** `prompt=consent` among the authorization request's prompts. */
export const consentRequested = (params: Interaction['params']): boolean =>
  typeof params.prompt === 'string' && params.prompt.split(' ').includes('consent');

/**
 * Whether the person consents on the consent page rather than we on their behalf: for a
 * third-party application (`isThirdParty`), and whenever the application asks with `prompt=consent`.
 * A first-party application is otherwise consented to at sign-in.
 */
export async function asksPersonForConsent(db: Queryable, params: Interaction['params']): Promise<boolean> {
  if (consentRequested(params)) {
    return true;
  }
  const application = await findApplication(db, String(params.client_id));
  return application?.isThirdParty ?? false;
}
