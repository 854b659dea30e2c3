import type Koa from 'koa';

const discoveryPath = '/oidc/.well-known/openid-configuration';

/**
 * Where clients look for the issuer's metadata besides OIDC's own path, and which document each
 * gets: RFC 8414 §3.1 places it after the well-known prefix, some clients append it to the issuer
 * as OIDC does, and MCP clients (its authorization specification, "Authorization Server Metadata
 * Discovery") also try OIDC discovery after the prefix, which is the whole OIDC document.
 */
export const metadataPaths = new Map<string, 'oauth' | 'openid'>([
  ['/.well-known/oauth-authorization-server/oidc', 'oauth'],
  ['/oidc/.well-known/oauth-authorization-server', 'oauth'],
  ['/.well-known/openid-configuration/oidc', 'openid'],
]);

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
 * The provider answers its discovery request; RFC 8414 metadata keeps its OAuth fields, so the
 * documents never disagree (the grants registered, DPoP when it is on).
 */
export async function serveMetadata(
  ctx: Koa.Context,
  provider: Koa.Middleware,
  document: 'oauth' | 'openid',
): Promise<void> {
  const asked = ctx.path;
  ctx.path = discoveryPath;
  try {
    await provider(ctx, () => Promise.resolve());
  } finally {
    ctx.path = asked;
  }
  const discovery = ctx.body;
  if (document === 'oauth' && ctx.status === 200 && isRecord(discovery)) {
    ctx.body = Object.fromEntries(
      oauthFields.filter((name) => name in discovery).map((name) => [name, discovery[name]]),
    );
  }
}
