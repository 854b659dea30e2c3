import type { ClientMetadata } from 'oidc-provider';

import { findApplication } from '../applications/queries.ts';
import { confidentialTypes, type Application } from '../applications/schemas.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { tokenExchangeGrantType } from './grants/token-exchange.ts';

/** How an application appears to oidc-provider. */
export function clientMetadataOf(application: Application): ClientMetadata {
  const confidential = confidentialTypes.has(application.type);
  const { oidcClientMetadata: oidc } = application;
  // Without a redirect URI an application signs no one in (a backend like API A): no code flow.
  const signsNoOneIn = application.type === 'MachineToMachine' || oidc.redirectUris.length === 0;
  return {
    client_id: application.id,
    client_name: application.name,
    ...(confidential && { client_secret: application.secret }),
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    application_type: application.type === 'Native' ? 'native' : 'web',
    // Every client may ask for token exchange, so that the grant itself answers a public or
    // not-allowed one with the contract's error rather than the provider's generic one.
    grant_types: [
      ...(application.type === 'MachineToMachine' ? ['client_credentials'] : []),
      ...(signsNoOneIn ? [] : ['authorization_code', 'refresh_token']),
      tokenExchangeGrantType,
    ],
    response_types: signsNoOneIn ? [] : ['code'],
    redirect_uris: signsNoOneIn ? [] : oidc.redirectUris,
    post_logout_redirect_uris: signsNoOneIn ? [] : oidc.postLogoutRedirectUris,
    ...(oidc.logoUri && { logo_uri: oidc.logoUri }),
    ...(oidc.backchannelLogoutUri && {
      backchannel_logout_uri: oidc.backchannelLogoutUri,
      backchannel_logout_session_required: oidc.backchannelLogoutSessionRequired ?? false,
    }),
  };
}

/** Clients come from the applications table, through the shared cache. */
export const findClient = (db: Queryable, cache: SharedCache) => (id: string) =>
  cache.get('applications', id, async () => {
    const application = await findApplication(db, id);
    return application && clientMetadataOf(application);
  });
