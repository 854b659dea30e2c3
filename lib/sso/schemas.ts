import { z } from 'zod';

import type { IdpSettings } from '../connectors/external-idp.ts';
import { idpEndpoint } from '../connectors/schemas.ts';
import { foreignJsonInput } from '../http/limits.ts';
import { domainName } from '../shared/domain-name.ts';

/** Enterprise SSO over OpenID Connect: the organization's IdP, found by discovery from its issuer. */
export const ssoConfigSchema = z.object({
  // An identity keeps its issuer in a column of 255 characters.
  issuer: idpEndpoint.max(255),
  clientId: z.string().min(1).max(256),
  clientSecret: z.string().min(1).max(512),
  scope: z.string().max(1024).optional(),
  trustUnverifiedEmail: z.boolean().default(false),
});

export type SsoConfig = z.output<typeof ssoConfigSchema>;

export const idpSettingsOfSso = (config: SsoConfig): IdpSettings => ({
  kind: 'oidc',
  issuer: config.issuer,
  clientId: config.clientId,
  clientSecret: config.clientSecret,
  // An enterprise IdP must say who the user is and give their email: openid, profile and email always.
  scope: [...new Set(['openid', 'profile', 'email', ...(config.scope?.split(' ').filter(Boolean) ?? [])])].join(' '),
  tokenEndpointAuthMethod: 'client_secret_post',
  trustUnverifiedEmail: config.trustUnverifiedEmail,
});

export const providerNames = ['OIDC'] as const;

const branding = z.strictObject({
  displayName: z.string().max(128).optional(),
  logo: z.string().max(2048).optional(),
  darkLogo: z.string().max(2048).optional(),
});

export const createSsoConnectorBody = z.strictObject({
  providerName: z.enum(providerNames),
  connectorName: z.string().min(1).max(128),
  config: foreignJsonInput.optional(),
  domains: z.array(domainName).max(100).optional(),
  branding: branding.optional(),
  syncProfile: z.boolean().optional(),
  enableTokenStorage: z.literal(false).optional(),
});

export const updateSsoConnectorBody = z.strictObject({
  connectorName: z.string().min(1).max(128).optional(),
  config: foreignJsonInput.optional(),
  domains: z.array(domainName).max(100).optional(),
  branding: branding.optional(),
  syncProfile: z.boolean().optional(),
  enableTokenStorage: z.literal(false).optional(),
});

export const ssoConnectorSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  providerName: z.enum(providerNames),
  connectorName: z.string(),
  config: z.record(z.string(), z.unknown()),
  domains: z.array(z.string()),
  branding: branding,
  syncProfile: z.boolean(),
  enableTokenStorage: z.boolean(),
  createdAt: z.number(),
  name: z.string(),
  providerType: z.literal('oidc'),
  providerLogo: z.string(),
  providerLogoDark: z.string(),
});

export type SsoConnector = z.output<typeof ssoConnectorSchema>;
