import type { ClientMetadata } from 'oidc-provider';
import { z } from 'zod';

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' }).max(2048);
/** Redirect URIs as the provider checks them for any client (a native app's loopback or own scheme too). */
const redirectUri = z.url({ error: 'must be an absolute URL' }).max(2048);
const sharedSecret = 'a client named by a URL has no shared secret (client_secret_* are refused)';

/**
 * A client's metadata document (RFC 7591 metadata at its client_id URL). Only what a public client
 * signing people in needs is read; other members are allowed and ignored.
 */
export const clientDocumentSpec = z
  .looseObject({
    client_id: z.string(),
    client_name: z.string().trim().min(1).max(256).optional(),
    client_uri: httpsUrl.optional(),
    logo_uri: httpsUrl.optional(),
    redirect_uris: z.array(redirectUri).min(1, 'must name at least one redirect URI').max(20),
    post_logout_redirect_uris: z.array(redirectUri).max(20).optional(),
    application_type: z.enum(['web', 'native']).optional(),
    grant_types: z
      .array(
        z.enum(['authorization_code', 'refresh_token'], {
          error: 'only authorization_code and refresh_token (a client named by a URL is public)',
        }),
      )
      .optional(),
    response_types: z.array(z.literal('code', { error: 'only code' })).optional(),
    token_endpoint_auth_method: z
      .enum(['none', 'private_key_jwt'], { error: `must be none or private_key_jwt: ${sharedSecret}` })
      .optional(),
    jwks_uri: httpsUrl.optional(),
    jwks: z.object({ keys: z.array(z.looseObject({ kty: z.string() })).max(10) }).optional(),
    client_secret: z.never({ error: sharedSecret }).optional(),
    client_secret_expires_at: z.never({ error: sharedSecret }).optional(),
  })
  .refine(
    (document) => document.token_endpoint_auth_method !== 'private_key_jwt' || document.jwks_uri || document.jwks,
    { message: 'private_key_jwt needs jwks_uri or jwks', path: ['token_endpoint_auth_method'] },
  );

export type ClientDocument = z.infer<typeof clientDocumentSpec>;

/** The document, or what is wrong with it in one line (the first problem, naming the member). */
export function readClientDocument(body: unknown, clientId: string): ClientDocument | string {
  const parsed = clientDocumentSpec.safeParse(body);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    return `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`;
  }
  if (parsed.data.client_id !== clientId) {
    return 'its client_id is not the URL it was fetched from';
  }
  return parsed.data;
}

/**
 * How such a client appears to oidc-provider: public (no secret; `none` or `private_key_jwt`),
 * signing people in with the code flow and refreshing, nothing else: the grants of a confidential
 * client (client credentials, token exchange, JWT bearer) are not among its grant types.
 */
export const documentClientMetadata = (document: ClientDocument): ClientMetadata => ({
  client_id: document.client_id,
  ...(document.client_name && { client_name: document.client_name }),
  ...(document.client_uri && { client_uri: document.client_uri }),
  ...(document.logo_uri && { logo_uri: document.logo_uri }),
  application_type: document.application_type ?? 'web',
  token_endpoint_auth_method: document.token_endpoint_auth_method ?? 'none',
  ...(document.jwks_uri && { jwks_uri: document.jwks_uri }),
  ...(document.jwks && { jwks: document.jwks }),
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: document.redirect_uris,
  post_logout_redirect_uris: document.post_logout_redirect_uris ?? [],
});
