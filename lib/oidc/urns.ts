/**
 * The URNs of the grants and token types the token endpoint serves, in one place: the grants use
 * them, and so do the client registration (which grants an application may use) and the metrics
 * (which grant a request was).
 */

/** RFC 8693 token exchange: API A swaps a user's token for one whose audience is API B. */
export const tokenExchangeGrantType = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** RFC 7523 §2.1: a JWT of a trusted outside issuer as the grant itself. */
export const jwtBearerGrantType = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** RFC 8693 §3: an access token, ours (JWT or opaque) or a trusted outside issuer's. */
export const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';

/** RFC 8693 §3: a JWT that is not (necessarily) an access token; ours are accepted only as access tokens. */
export const jwtTokenType = 'urn:ietf:params:oauth:token-type:jwt';

/** Logto's impersonation token (`POST /api/subject-tokens`), exchanged once. */
export const impersonationTokenType = 'urn:logto:token-type:impersonation_token';

/** Logto's personal access token (`POST /api/users/:userId/personal-access-tokens`), exchanged until it expires. */
export const personalAccessTokenType = 'urn:logto:token-type:personal_access_token';
