import type Koa from 'koa';

/** RFC 8414 §3.1 places the document after the well-known prefix; some clients append it to the issuer as OIDC does. */
export const authorizationServerMetadataPaths = new Set([
  '/.well-known/oauth-authorization-server/oidc',
  '/oidc/.well-known/oauth-authorization-server',
]);

const discoveryPath = '/oidc/.well-known/openid-configuration';

/**
 * The fields of the IANA "OAuth Authorization Server Metadata" registry that discovery may carry.
 * OpenID-only ones (userinfo, ID token algorithms, claims, subject types, logout) are left out: an
 * OAuth client has no use for them and RFC 8414 does not define them.
 */
const oauthFields = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'jwks_uri',
  'registration_endpoint',
  'scopes_supported',
  'response_types_supported',
  'response_modes_supported',
  'grant_types_supported',
  'token_endpoint_auth_methods_supported',
  'token_endpoint_auth_signing_alg_values_supported',
  'service_documentation',
  'ui_locales_supported',
  'op_policy_uri',
  'op_tos_uri',
  'revocation_endpoint',
  'revocation_endpoint_auth_methods_supported',
  'revocation_endpoint_auth_signing_alg_values_supported',
  'introspection_endpoint',
  'introspection_endpoint_auth_methods_supported',
  'introspection_endpoint_auth_signing_alg_values_supported',
  'code_challenge_methods_supported',
  'signed_metadata',
  'device_authorization_endpoint',
  'tls_client_certificate_bound_access_tokens',
  'mtls_endpoint_aliases',
  'pushed_authorization_request_endpoint',
  'require_pushed_authorization_requests',
  'request_parameter_supported',
  'request_uri_parameter_supported',
  'require_request_uri_registration',
  'require_signed_request_object',
  'request_object_signing_alg_values_supported',
  'request_object_encryption_alg_values_supported',
  'request_object_encryption_enc_values_supported',
  'authorization_signing_alg_values_supported',
  'authorization_encryption_alg_values_supported',
  'authorization_encryption_enc_values_supported',
  'introspection_signing_alg_values_supported',
  'introspection_encryption_alg_values_supported',
  'introspection_encryption_enc_values_supported',
  'authorization_response_iss_parameter_supported',
  'authorization_details_types_supported',
  'dpop_signing_alg_values_supported',
  'client_id_metadata_document_supported',
];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * RFC 8414 metadata: the provider answers its discovery request, and the answer keeps its OAuth
 * fields, so the two documents never disagree (the grants registered, DPoP when it is on).
 */
export async function serveAuthorizationServerMetadata(ctx: Koa.Context, provider: Koa.Middleware): Promise<void> {
  const asked = ctx.path;
  ctx.path = discoveryPath;
  try {
    await provider(ctx, () => Promise.resolve());
  } finally {
    ctx.path = asked;
  }
  const discovery = ctx.body;
  if (ctx.status === 200 && isRecord(discovery)) {
    ctx.body = Object.fromEntries(
      oauthFields.filter((name) => name in discovery).map((name) => [name, discovery[name]]),
    );
  }
}
