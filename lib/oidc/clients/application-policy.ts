import type { Client } from 'oidc-provider';

import type { Application } from '../../applications/schemas.ts';

const day = 86_400;

/**
 * The application's settings the provider acts on, carried on its client (oidc-provider's
 * `extraClientMetadata`, so that the cached client holds them: no lookup when a token is issued).
 * Defaults are Logto's (`customClientMetadataDefault`).
 */
export type ApplicationPolicy = {
  isThirdParty: boolean;
  /** A refresh token without `offline_access` (web applications only, as Logto). */
  alwaysIssueRefreshToken: boolean;
  /** false: a refresh token is used again and again; true: the provider's rotation (docs/clients.md). */
  rotateRefreshToken: boolean;
  /** Seconds. */
  refreshTokenTtl: number;
  /** Seconds. */
  idTokenTtl: number;
  /** Origins besides those of its redirect URIs that may call the token, userinfo and revocation endpoints from a browser. */
  corsAllowedOrigins: string[];
  /** Logto's: a user's grants to this application beyond this many are revoked, the oldest first. */
  maxAllowedGrants?: number;
};

export const applicationPolicyProperties = [
  'isThirdParty',
  'alwaysIssueRefreshToken',
  'rotateRefreshToken',
  'refreshTokenTtl',
  'idTokenTtl',
  'corsAllowedOrigins',
  'maxAllowedGrants',
] as const satisfies ReadonlyArray<keyof ApplicationPolicy>;

export function policyOfApplication(application: Application): ApplicationPolicy {
  const custom = application.customClientMetadata;
  return {
    isThirdParty: application.isThirdParty,
    alwaysIssueRefreshToken: custom.alwaysIssueRefreshToken ?? false,
    rotateRefreshToken: custom.rotateRefreshToken ?? true,
    refreshTokenTtl:
      custom.refreshTokenTtlInDays !== undefined
        ? custom.refreshTokenTtlInDays * day
        : (custom.refreshTokenTtl ?? 14 * day),
    idTokenTtl: custom.idTokenTtl ?? 3600,
    corsAllowedOrigins: custom.corsAllowedOrigins ?? [],
    ...(custom.maxAllowedGrants !== undefined && { maxAllowedGrants: custom.maxAllowedGrants }),
  };
}

/**
 * The policy a client carries. One without it (a client named by a URL, described by its own
 * document) is a third party with the defaults.
 */
export function policyOf(client: Client): ApplicationPolicy {
  const metadata = client.metadata() as Partial<ApplicationPolicy>;
  return {
    isThirdParty: metadata.isThirdParty !== false,
    alwaysIssueRefreshToken: metadata.alwaysIssueRefreshToken ?? false,
    rotateRefreshToken: metadata.rotateRefreshToken ?? true,
    refreshTokenTtl: metadata.refreshTokenTtl ?? 14 * day,
    idTokenTtl: metadata.idTokenTtl ?? 3600,
    corsAllowedOrigins: metadata.corsAllowedOrigins ?? [],
    maxAllowedGrants: metadata.maxAllowedGrants,
  };
}

/** Whether a browser at `origin` may call the provider's endpoints as this client (CORS). */
export function allowsOrigin(client: Client, origin: string): boolean {
  if (origin === 'null') {
    return false;
  }
  return (
    policyOf(client).corsAllowedOrigins.includes(origin) ||
    (client.redirectUris ?? []).some((uri) => URL.canParse(uri) && new URL(uri).origin === origin)
  );
}
