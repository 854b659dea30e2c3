import { type ClientMetadata, errors } from 'oidc-provider';

import { findApplication } from '../applications/queries.ts';
import type { Application } from '../applications/schemas.ts';
import { isUrlClientId } from '../shared/url-client-ids.ts';
import type { ExperienceContext } from './context.ts';

const toPublicApplication = (application: Application) => ({
  id: application.id,
  name: application.name,
  description: application.description,
  isThirdParty: application.isThirdParty,
  branding: application.oidcClientMetadata.logoUri ? { logoUrl: application.oidcClientMetadata.logoUri } : {},
});

/** A client named by a URL, as its document describes it: a third party, with its https logo. */
const toPublicDocumentClient = (client: ClientMetadata) => {
  const { host } = new URL(client.client_id);
  return {
    id: client.client_id,
    name: client.client_name ?? host,
    description: null,
    isThirdParty: true,
    branding: client.logo_uri ? { logoUrl: client.logo_uri } : {},
    clientIdHost: host,
  };
};

/**
 * The application a sign-in is for, as the hosted pages show it, or the client its URL names
 * (which /oidc/auth found; gone since: undefined).
 */
export async function findPublicClient({ db, oidc }: Pick<ExperienceContext, 'db' | 'oidc'>, clientId: string) {
  if (isUrlClientId(clientId)) {
    return oidc.documents.client(clientId).then(toPublicDocumentClient, (error: unknown) => {
      if (error instanceof errors.InvalidClient) {
        return undefined;
      }
      throw error;
    });
  }
  const application = await findApplication(db, clientId);
  return application && toPublicApplication(application);
}
