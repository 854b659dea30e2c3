// The two internals of oidc-provider (pinned to 9.13.3) that organization-tokens.ts takes: its
// refresh token grant and the grant helpers the provider binds to it.
declare module 'oidc-provider/lib/actions/grants/refresh_token.js' {
  export const handler: (provider: unknown, helpers: unknown, ctx: unknown) => Promise<void>;
  export const parameters: Set<string>;
  export const grantType: 'refresh_token';
}

declare module 'oidc-provider/lib/helpers/grants.js' {
  const helpers: Record<string, (...args: unknown[]) => unknown>;
  export = helpers;
}
