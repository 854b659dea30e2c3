/**
 * A `client_id` that looks like a URL names a client by its metadata document (Client ID Metadata
 * Documents, `lib/oidc/client-id-metadata/`); anything else is an application's id (those never
 * hold `://`). Such a client has no application row: every reader of that table on the sign-in
 * path asks this first.
 */
export const isUrlClientId = (clientId: string): boolean => /^[a-z][a-z\d+.-]*:\/\//i.test(clientId);
