import { z } from 'zod';

import { customDataInput } from '../http/limits.ts';
import { scopeName } from '../resources/schemas.ts';
import { domainName } from '../shared/domain-name.ts';
import { entityId } from '../shared/entity-id.ts';

const jsonObject = z.record(z.string(), z.unknown());
const description = z.string().max(4096).nullable();

/** Ids named in a request body: existing entities, checked one by one before anything is written. */
export const idArray = z.array(z.string().min(1).max(64)).max(1000);
/** POST bodies add at least one id (Logto's `nonempty()`); PUT bodies may empty the set. */
export const nonEmptyIdArray = idArray.min(1);

export const organizationRoleTypes = ['User', 'MachineToMachine'] as const;
export type OrganizationRoleType = (typeof organizationRoleTypes)[number];

/** Logto's hex colour (`#abc` or `#aabbcc`, any case). */
const hexColor = z
  .string()
  .max(7)
  .regex(/^#[\dA-Fa-f]{3}([\dA-Fa-f]{3})?$/, 'must be a hex colour such as #5d34f2');
/**
 * Logos and favicons are shown on sign-in pages and in emails: absolute http(s) URLs only (Logto takes
 * any URL, `javascript:` included; **beyond**).
 */
const imageUrl = z.url({ protocol: /^https?$/ }).max(2048);
/** Custom CSS, in characters; 4 bytes each at most, it fits the column (mediumtext on MySQL). */
export const customCssMaxLength = 65_536;

/** Logto's `color` of an organization: every field optional. */
export const organizationColorSchema = z.strictObject({
  primaryColor: hexColor.optional(),
  isDarkModeEnabled: z.boolean().optional(),
  darkPrimaryColor: hexColor.optional(),
});
/** Logto's `branding` of an organization: logo and favicon URLs, light and dark, every one optional. */
export const organizationBrandingSchema = z.strictObject({
  logoUrl: imageUrl.optional(),
  darkLogoUrl: imageUrl.optional(),
  favicon: imageUrl.optional(),
  darkFavicon: imageUrl.optional(),
});
export type OrganizationBranding = z.output<typeof organizationBrandingSchema>;

// Logto's organization shape.
export const organizationSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  customData: jsonObject,
  isMfaRequired: z.boolean(),
  color: z.object({
    primaryColor: z.string().optional(),
    isDarkModeEnabled: z.boolean().optional(),
    darkPrimaryColor: z.string().optional(),
  }),
  branding: z.object({
    logoUrl: z.string().optional(),
    darkLogoUrl: z.string().optional(),
    favicon: z.string().optional(),
    darkFavicon: z.string().optional(),
  }),
  customCss: z.string().nullable(),
  createdAt: z.number(),
});

export type Organization = z.output<typeof organizationSchema>;

export const featuredUserSchema = z.object({
  id: z.string(),
  avatar: z.string().nullable(),
  name: z.string().nullable(),
});

export const organizationListItemSchema = organizationSchema.extend({
  usersCount: z.number().optional(),
  featuredUsers: z.array(featuredUserSchema).optional(),
});

export const createOrganizationBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(128),
  description: description.optional(),
  customData: customDataInput.optional(),
  isMfaRequired: z.boolean().optional(),
  /** Replaced as a whole; `{}` or null clears it. */
  color: organizationColorSchema.nullable().optional(),
  /** Replaced as a whole; `{}` or null clears it. */
  branding: organizationBrandingSchema.nullable().optional(),
  customCss: z.string().max(customCssMaxLength).nullable().optional(),
});

export const updateOrganizationBody = createOrganizationBody.partial();
export type OrganizationChanges = z.output<typeof updateOrganizationBody>;

export const organizationScopeSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
});

export type OrganizationScope = z.output<typeof organizationScopeSchema>;

/** Organization scopes end up in tokens' `scope` strings, so their names are RFC 6749 scope-tokens too. */
export const createOrganizationScopeBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: scopeName.max(128),
  description: description.optional(),
});

export const updateOrganizationScopeBody = createOrganizationScopeBody.partial();

export const organizationRoleSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: z.enum(organizationRoleTypes),
});

export type OrganizationRole = z.output<typeof organizationRoleSchema>;

/** What Logto's role list adds to each role: its organization scopes and API resource scopes, by name. */
export const organizationRoleListItemSchema = organizationRoleSchema.extend({
  scopes: z.array(z.object({ id: z.string(), name: z.string() })),
  resourceScopes: z.array(
    z.object({ id: z.string(), name: z.string(), resource: z.object({ id: z.string(), name: z.string() }) }),
  ),
});

export type OrganizationRoleListItem = z.output<typeof organizationRoleListItemSchema>;

export const createOrganizationRoleBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(128),
  description: description.optional(),
  type: z.enum(organizationRoleTypes).optional(),
  organizationScopeIds: idArray.optional(),
  resourceScopeIds: idArray.optional(),
});

// The type is fixed at creation: members already hold the role according to it.
export const updateOrganizationRoleBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(128).optional(),
  description: description.optional(),
});

/** `{id, name}` of the organization roles a member holds or an invitation grants. */
export const roleReferenceSchema = z.object({ id: z.string(), name: z.string() });
export type RoleReference = z.output<typeof roleReferenceSchema>;

/** Member role changes name roles by id, by name, or both (Logto's body). */
export const memberRolesBody = z.strictObject({
  organizationRoleIds: idArray.optional(),
  organizationRoleNames: z.array(z.string().min(1).max(128)).max(1000).optional(),
});

export const emailDomain = domainName;

export const jitEmailDomainSchema = z.object({
  tenantId: z.string(),
  organizationId: z.string(),
  emailDomain: z.string(),
});

export const invitationStatuses = ['Pending', 'Accepted', 'Expired', 'Revoked'] as const;
export type InvitationStatus = (typeof invitationStatuses)[number];

export const invitationSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  inviterId: z.string().nullable(),
  invitee: z.string(),
  acceptedUserId: z.string().nullable(),
  organizationId: z.string(),
  status: z.enum(invitationStatuses),
  createdAt: z.number(),
  updatedAt: z.number(),
  expiresAt: z.number(),
  organizationRoles: z.array(roleReferenceSchema),
});

export type Invitation = z.output<typeof invitationSchema>;

/**
 * What the invitation email carries besides the organization and the inviter (Logto's
 * `OrganizationInvitation` template variables): the `link` the invitee follows to accept, which the
 * caller makes (it knows where its accept page is), and a `code` if it wants one. `locale` picks
 * the operator's email template of that language (then the default's); `uiLocales` is taken as Logto
 * takes it. The built-in email is English.
 */
export const invitationMessagePayload = z.strictObject({
  link: z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).max(2048),
  code: z.string().min(1).max(256).optional(),
  locale: z.string().max(64).optional(),
  uiLocales: z.string().max(256).optional(),
});
export type InvitationMessagePayload = z.output<typeof invitationMessagePayload>;

export const createInvitationBody = z.strictObject({
  inviterId: entityId.nullable().optional(),
  invitee: z.email().max(256),
  organizationId: entityId,
  expiresAt: z.number().int(),
  organizationRoleIds: idArray.optional(),
  /** Emails the invitation with this payload; `false` (the default) sends nothing. */
  messagePayload: z
    .union([z.literal(false), invitationMessagePayload], {
      error:
        'must be false, or an object with the `link` the invitee follows to accept (and `code`, `locale`, `uiLocales`)',
    })
    .optional(),
});

export const invitationStatusBody = z.strictObject({
  status: z.enum(['Accepted', 'Revoked']),
  acceptedUserId: entityId.nullable().optional(),
});
