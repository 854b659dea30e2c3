import { type Configuration, Provider } from 'oidc-provider';

import type { AuditLog } from '../audit/audit-log.ts';
import type { ServiceContext } from '../http/context.ts';
import { countRequestsAsHttps } from '../http/pages/secure-cookies.ts';
import { catalogues } from '../shared/phrases/index.ts';
import { isUrlClientId } from '../shared/url-client-ids.ts';
import { claimsByScope, findAccount, oidcScopes } from './account.ts';
import { createAdapter } from './adapter.ts';
import type { ClientIdMetadataDocuments } from './client-id-metadata/documents.ts';
import { allowsOrigin, applicationPolicyProperties, policyOf } from './clients/application-policy.ts';
import { ClientAuthThrottle } from './clients/client-auth-throttle.ts';
import { findAuthenticatingClient } from './clients/clients.ts';
import { consentPolicy, loadGrant } from './consent-policy.ts';
import { limitGrants } from './grant-limit.ts';
import { auditJwtBearerFailures, jwtBearerGrant, jwtBearerParameters } from './grants/jwt-bearer.ts';
import { mayActClaim } from './grants/token-exchange/delegation-policy.ts';
import {
  tokenExchangeGrant,
  tokenExchangeLogKey,
  tokenExchangeParameters,
  tokenExchangeRepeatableParameters,
} from './grants/token-exchange/token-exchange.ts';
import { dropImpliedOpenid, impliedOpenidParam, impliesOpenid } from './implied-openid.ts';
import type { KeySet } from './keys/keys.ts';
import { renderError } from './pages/error-page.ts';
import { logoutPages } from './pages/logout-pages.ts';
import { resourceServerInfo } from './resource-servers.ts';
import { answerJwtRefusals } from './tokens/jwt-refusals.ts';
import { organizationTokens } from './tokens/organization-tokens.ts';
import { refreshTokenTtl, rotatesRefreshToken } from './tokens/refresh-tokens.ts';
import { introspectJwtAccessToken, mayIntrospect } from './tokens/token-introspection.ts';
import { countTokenRequests } from './tokens/token-metrics.ts';
import { mayRevoke, revokeJwtAccessToken } from './tokens/token-revocation.ts';
import { jwtBearerGrantType, tokenExchangeGrantType } from './urns.ts';

/** fetch without the provider's dispatcher (the one that refuses special-use addresses). */
const withoutAddressGuard = (input: string | URL | Request, init?: RequestInit) => {
  const rest: RequestInit & { dispatcher?: unknown } = { ...init };
  delete rest.dispatcher;
  return fetch(input, rest);
};

export type OidcDependencies = ServiceContext & { audit: AuditLog };

const day = 86_400;

/**
 * Builds the provider for one key set; `mount.ts` builds a new one when the keys change (the
 * clients named by URL outlive it).
 */
export function createProvider(
  { config, db, cache, logger, audit }: OidcDependencies,
  keys: KeySet,
  documents: ClientIdMetadataDocuments,
): Provider {
  const throttle = new ClientAuthThrottle(db, cache, config.clientAuthThrottle);
  const mayActFor = mayActClaim(db, cache);
  const configuration: Configuration = {
    adapter: createAdapter(db, throttle.observe(findAuthenticatingClient(db, cache, logger, documents))),
    jwks: { keys: keys.signing },
    // The interaction cookie must reach /api/experience as well as the sign-in pages.
    cookies: { keys: keys.cookieKeys, short: { path: '/', httpOnly: true, sameSite: 'lax' } },
    claims: claimsByScope,
    // As Logto: an ID token carries what its scopes grant, also beside an opaque access token (the
    // provider's default keeps those claims for userinfo, and Auth.js, passport and Logto's SDK read
    // the ID token).
    conformIdTokenClaims: false,
    scopes: oidcScopes,
    extraParams: { first_screen: null, [impliedOpenidParam]: impliesOpenid },
    clockTolerance: 5,
    // The provider fetches what applications name (back-channel logout URIs) through its own guard
    // against private and loopback addresses; HOOKS_ALLOW_PRIVATE_TARGETS lifts it, as for webhooks.
    ...(config.hooksAllowPrivateTargets && { fetch: withoutAddressGuard }),
    discovery: {
      // The languages the hosted pages ship (a custom phrase's language is the operator's to announce).
      ui_locales_supported: Object.keys(catalogues),
      // Client ID Metadata Documents (client-id-metadata/): said in discovery, and so in RFC 8414 metadata.
      ...(documents.enabled && { client_id_metadata_document_supported: true }),
    },
    // The provider's rule (PKCE for public clients), and for every client named by a URL: one that
    // authenticates with a key is still no one we registered.
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' || isUrlClientId(client.clientId) },
    features: {
      devInteractions: { enabled: false },
      // The confirmation and the page after it in the hosted pages' look (pages/).
      rpInitiatedLogout: { enabled: true, ...logoutPages(db, cache) },
      clientCredentials: { enabled: true },
      // An application's oidcClientMetadata.backchannelLogoutUri gets a logout token when a session ends.
      backchannelLogout: { enabled: true },
      // RFC 8628 for native applications with customClientMetadata.isDeviceFlow (clients.ts).
      deviceFlow: { enabled: true },
      // RFC 9449: a DPoP header binds the token issued (token exchange binds its own: dpop-binding.ts).
      dPoP: { enabled: true },
      // The same rules answer for our JWT access tokens (answerJwtRefusals below).
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => mayIntrospect(client, token.clientId),
      },
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => mayRevoke(client, token.clientId),
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        // As Logto: a code exchanged without `resource` gives the userinfo token when openid was
        // granted (Logto's SDK fetches userinfo so), the one granted API's token otherwise.
        useGrantedResource: () => false,
        getResourceServerInfo: resourceServerInfo(db, cache, config.managementApiResource),
      },
    },
    formats: {
      customizers: {
        // RFC 9068 access tokens always carry `scope`, empty when nothing was granted.
        jwt(_ctx, _token, jwt) {
          jwt.payload.scope ??= '';
        },
      },
    },
    ttl: {
      // An access token for an API lives as long as that API says (token exchange issues these).
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
      AuthorizationCode: 60,
      DeviceCode: 600,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600,
      IdToken: (_ctx, _token, client) => policyOf(client).idTokenTtl,
      Interaction: 3600,
      // A grant outlives every refresh token issued under it (refreshTokenTtlInDays is at most 90).
      Grant: 90 * day,
      RefreshToken: refreshTokenTtl,
      Session: 14 * day,
    },
    responseTypes: ['code'],
    extraClientMetadata: { properties: [...applicationPolicyProperties] },
    // Browser applications call the token, userinfo and revocation endpoints from the origins of
    // their redirect URIs and those of corsAllowedOrigins (Logto's rule).
    clientBasedCORS: (_ctx, origin, client) => allowsOrigin(client, origin),
    // A first-party application is consented to on the person's behalf: its grant holds what it
    // asks (consent-policy.ts), and a consent prompt all the same (prompt=consent) is answered by
    // GET /consent at once, the hop Logto's clients expect; only a third party's
    // request shows the consent page.
    loadExistingGrant: loadGrant({ db, cache, managementApiResource: config.managementApiResource }),
    interactions: {
      policy: consentPolicy(),
      url: (_ctx, interaction) =>
        interaction.prompt.name === 'consent'
          ? `/consent?app_id=${encodeURIComponent(String(interaction.params.client_id))}`
          : interaction.params.first_screen === 'register'
            ? '/register'
            : '/sign-in',
    },
    // The provider's error pages say what happened in a sentence, in the hosted pages' look (pages/).
    renderError: renderError(db, cache),
    findAccount: findAccount(db),
    // Claims a grant set on its token (token exchange's `act`) survive: the provider replaces
    // `extra` with what this returns. A user's token carries `may_act` where the application's
    // delegation policy names one actor (delegation-policy.ts).
    extraTokenClaims: async (_ctx, token) =>
      token.kind === 'AccessToken' && token.clientId
        ? { ...token.extra, ...(await mayActFor(token.clientId)) }
        : token.extra,
    // Refresh tokens for applications that may hold them, when offline_access was granted, or
    // always for a web application that says so (Logto's alwaysIssueRefreshToken).
    issueRefreshToken: (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') &&
      (code.scopes.has('offline_access') ||
        (client.applicationType === 'web' && policyOf(client).alwaysIssueRefreshToken)),
    rotateRefreshToken: rotatesRefreshToken,
  };
  const provider = new Provider(config.issuer, configuration);
  provider.proxy = config.trustProxy;
  dropImpliedOpenid(provider);
  limitGrants(provider, db, logger);
  countRequestsAsHttps(provider, config.endpoint);
  provider.registerGrantType(
    tokenExchangeGrantType,
    tokenExchangeGrant({ config, db, cache, audit }),
    tokenExchangeParameters,
    tokenExchangeRepeatableParameters,
  );
  organizationTokens(db).register(provider);
  provider.registerGrantType(jwtBearerGrantType, jwtBearerGrant({ config, db, cache, audit }), jwtBearerParameters);
  auditJwtBearerFailures(provider, audit, logger);
  answerJwtRefusals(provider, {
    revocation: revokeJwtAccessToken({ issuer: config.issuer, db, cache }),
    introspection: introspectJwtAccessToken({ issuer: config.issuer, db, cache, documents }),
  });
  throttle.attach(provider);
  // The application did not take its logout token: the session still ended here.
  provider.on('backchannel.error', (_ctx, error, client) =>
    logger.warn({ err: error, clientId: client.clientId }, 'back-channel logout failed'),
  );
  provider.on('server_error', (_ctx, error) => logger.error({ err: error }, 'oidc server error'));
  countTokenRequests(provider);
  // Why a client's request failed, for its operator: the OAuth error and the provider's description
  // (which names no secret, token or code), the grant type and the client id.
  provider.on('grant.error', (ctx, error) => {
    const { error: code, error_description: description } = error as { error?: string; error_description?: string };
    logger.info(
      {
        error: code ?? 'server_error',
        description,
        grantType: typeof ctx.oidc.params?.grant_type === 'string' ? ctx.oidc.params.grant_type : undefined,
        clientId: ctx.oidc.client?.clientId,
      },
      'token request refused',
    );
  });
  // Failed exchanges are audited too, including those refused before the grant runs (client auth).
  // A listener must not throw: it would turn the response into a 500.
  provider.on('grant.error', (ctx, error) => {
    try {
      if (ctx.oidc.params?.grant_type === tokenExchangeGrantType) {
        const { error: code, error_description: description } = error as { error?: string; error_description?: string };
        const { scope } = ctx.oidc.params;
        audit.record(tokenExchangeLogKey, {
          result: 'Error',
          applicationId: ctx.oidc.client?.clientId,
          error: { error: code ?? 'server_error', ...(description && { error_description: description }) },
          params: {
            resource: ctx.oidc.params.resource,
            subjectTokenType: ctx.oidc.params.subject_token_type,
            scopesRequested: typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [],
          },
        });
      }
    } catch (auditError) {
      logger.error({ err: auditError }, 'could not audit a failed token exchange');
    }
  });
  return provider;
}
