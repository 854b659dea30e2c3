import type { ClientMetadata } from 'oidc-provider';

import { findClientApplication } from '../../applications/queries.ts';
import { type Application, confidentialTypes } from '../../applications/schemas.ts';
import { listApplicationSecrets } from '../../applications/secret-queries.ts';
import type { Logger } from '../../http/logger.ts';
import { isUrlClientId } from '../../shared/url-client-ids.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import type { ClientIdMetadataDocuments } from '../client-id-metadata/documents.ts';
import { jwtBearerGrantType, tokenExchangeGrantType } from '../urns.ts';
import { policyOfApplication } from './application-policy.ts';
import { type NamedSecrets, namedSecretsOf, withPresentedSecret } from './named-secrets.ts';

/**
 * How an application appears to oidc-provider. `clientSecret` is the one secret the provider
 * compares: the legacy one (or the internal one that replaced it).
 */
export function clientMetadataOf(application: Application, clientSecret: string): ClientMetadata {
  const confidential = confidentialTypes.has(application.type);
  const { oidcClientMetadata: oidc } = application;
  // A device-flow application (RFC 8628) signs people in on another device: no code flow.
  const deviceFlow = application.type === 'Native' && application.customClientMetadata.isDeviceFlow === true;
  // Without a redirect URI an application signs no one in (a backend like API A): no code flow.
  const signsNoOneIn = application.type === 'MachineToMachine' || oidc.redirectUris.length === 0 || deviceFlow;
  return {
    client_id: application.id,
    client_name: application.name,
    ...(confidential && { client_secret: clientSecret }),
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    application_type: application.type === 'Native' ? 'native' : 'web',
    // Every client may ask for token exchange (and the JWT bearer grant), so that the grant itself
    // answers a public or not-allowed one with the contract's error rather than the provider's generic one.
    grant_types: [
      ...(application.type === 'MachineToMachine' ? ['client_credentials'] : []),
      ...(deviceFlow ? ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'] : []),
      ...(signsNoOneIn ? [] : ['authorization_code', 'refresh_token']),
      tokenExchangeGrantType,
      jwtBearerGrantType,
    ],
    response_types: signsNoOneIn ? [] : ['code'],
    redirect_uris: signsNoOneIn ? [] : oidc.redirectUris,
    post_logout_redirect_uris: signsNoOneIn ? [] : oidc.postLogoutRedirectUris,
    ...(oidc.logoUri && { logo_uri: oidc.logoUri }),
    ...policyOfApplication(application),
    ...(oidc.backchannelLogoutUri && {
      backchannel_logout_uri: oidc.backchannelLogoutUri,
      backchannel_logout_session_required: oidc.backchannelLogoutSessionRequired ?? false,
    }),
  };
}

/** A client as cached: what the provider is given, and the application's named secrets. */
export type CachedClient = { metadata: ClientMetadata; secrets: NamedSecrets };

/**
 * Clients come from the applications table, with their named secrets, through the shared cache
 * (every change to either bumps `applications`).
 */
export const loadClient =
  (db: Queryable, cache: SharedCache) =>
  (id: string): Promise<CachedClient | undefined> =>
    // No application's id holds U+0000, and PostgreSQL refuses it in a query (a 500 where a client_id
    // of a form, e.g. at introspection, is looked up): such an id is no client, on every engine alike.
    id.includes('\u0000')
      ? Promise.resolve(undefined)
      : cache.get('applications', id, async () => {
          const found = await findClientApplication(db, id);
          if (!found) {
            return undefined;
          }
          const { application, clientSecret } = found;
          const confidential = confidentialTypes.has(application.type);
          return {
            metadata: clientMetadataOf(application, clientSecret),
            secrets: namedSecretsOf(confidential ? await listApplicationSecrets(db, id) : []),
          };
        });

/** The client's metadata as stored (the legacy or internal secret), for lookups that authenticate no one. */
export const findClient = (db: Queryable, cache: SharedCache) => {
  const load = loadClient(db, cache);
  return (id: string) => load(id).then((client) => client?.metadata);
};

/**
 * The provider's lookup: the client as this request authenticates it (`withPresentedSecret`), or,
 * for a URL, the client its metadata document describes (which has no secret).
 */
export const findAuthenticatingClient = (
  db: Queryable,
  cache: SharedCache,
  logger: Logger,
  documents: ClientIdMetadataDocuments,
) => {
  const load = loadClient(db, cache);
  return (id: string) =>
    isUrlClientId(id)
      ? documents.client(id)
      : load(id).then((client) => client && withPresentedSecret(client.metadata, client.secrets, id, logger));
};
