import { z } from 'zod';

import { organizationScopeSchema } from '../../organizations/schemas.ts';
import { resourceSchema, scopeSchema } from '../../resources/schemas.ts';

/** Logto's `ApplicationUserConsentScopeType`: the path segment of `DELETE …/user-consent-scopes/:scopeType/:scopeId`. */
export const consentScopeTypes = [
  'organization-scopes',
  'resource-scopes',
  'organization-resource-scopes',
  'user-scopes',
] as const;
export type ConsentScopeType = (typeof consentScopeTypes)[number];

/** Logto's `UserScope`: what an ID token and userinfo may tell of the person. */
export const consentUserScopes = [
  'profile',
  'email',
  'phone',
  'address',
  'custom_data',
  'identities',
  'roles',
  'urn:logto:scope:organizations',
  'urn:logto:scope:organization_roles',
] as const;

/** Unknown ids are refused by name (422), so an id longer than ours is still answered so. */
const scopeIds = z.array(z.string().min(1).max(128)).max(200);

export const assignConsentScopesBody = z.strictObject({
  organizationScopes: scopeIds.optional(),
  resourceScopes: scopeIds.optional(),
  organizationResourceScopes: scopeIds.optional(),
  userScopes: z.array(z.enum(consentUserScopes)).max(consentUserScopes.length).optional(),
});
export type AssignConsentScopes = z.output<typeof assignConsentScopesBody>;

const scopeBrief = scopeSchema.pick({ id: true, name: true, description: true });
const scopesOfResource = z.object({
  resource: resourceSchema.pick({ id: true, name: true, indicator: true }),
  scopes: z.array(scopeBrief),
});

export const consentScopesSchema = z.object({
  organizationScopes: z.array(organizationScopeSchema.pick({ id: true, name: true, description: true })),
  resourceScopes: z.array(scopesOfResource),
  organizationResourceScopes: z.array(scopesOfResource),
  userScopes: z.array(z.enum(consentUserScopes)),
});
export type ConsentScopes = z.output<typeof consentScopesSchema>;
