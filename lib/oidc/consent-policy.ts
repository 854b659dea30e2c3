import type { Interaction } from 'oidc-provider';

import { findApplication } from '../applications/queries.ts';
import type { Queryable } from '../storage/database.ts';
import { isUrlClientId } from '../shared/url-client-ids.ts';

/** `prompt=consent` among the authorization request's prompts. */
export const consentRequested = (params: Interaction['params']): boolean =>
  typeof params.prompt === 'string' && params.prompt.split(' ').includes('consent');

/**
 * Whether the person consents on the consent page rather than we on their behalf: for a
 * third-party application (`isThirdParty`), for a client named by a URL (no one registered it:
 * always a third party), and whenever the application asks with `prompt=consent`. A first-party
 * application is otherwise consented to at sign-in.
 */
export async function asksPersonForConsent(db: Queryable, params: Interaction['params']): Promise<boolean> {
  const clientId = String(params.client_id);
  if (consentRequested(params) || isUrlClientId(clientId)) {
    return true;
  }
  const application = await findApplication(db, clientId);
  return application?.isThirdParty ?? false;
}
