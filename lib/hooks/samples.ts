import type { HookEvent } from './events.ts';

/**
 * One example payload per event: what `POST /api/hooks/:id/test` sends (`samplePayload`, with the
 * hook's id and the time of the test), the examples of the OpenAPI document's `webhooks`, and what
 * docs/webhooks.md shows.
 */

const ip = '203.0.113.7';
const userAgent = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const at = 1_735_689_600_000;

const user = {
  id: 'u1a2b3c4d5e6f7g8h9i0j',
  username: 'jane_doe',
  primaryEmail: 'jane@example.com',
  primaryPhone: null,
  name: 'Jane Doe',
  avatar: null,
  customData: {},
  identities: {},
  lastSignInAt: at,
  createdAt: at,
  updatedAt: at,
  profile: {},
  applicationId: null,
  isSuspended: false,
  hasPassword: true,
};
const role = {
  tenantId: 'default',
  id: 'r1a2b3c4d5e6f7g8h9i0j',
  name: 'editor',
  description: 'Can edit articles',
  type: 'User',
  isDefault: false,
};
const scope = {
  tenantId: 'default',
  id: 's1a2b3c4d5e6f7g8h9i0j',
  resourceId: 'a1a2b3c4d5e6f7g8h9i0j',
  name: 'write:articles',
  description: 'Write articles',
  createdAt: at,
};
const organization = {
  tenantId: 'default',
  id: 'o1a2b3c4d5e6f7g8h9i0j',
  name: 'Acme',
  description: 'The Acme Corporation',
  customData: {},
  isMfaRequired: false,
  color: {},
  branding: {},
  customCss: null,
  createdAt: at,
};
const organizationRole = {
  tenantId: 'default',
  id: 'or1a2b3c4d5e6f7g8h9i0',
  name: 'admin',
  description: 'Organization administrator',
  type: 'User',
};
const organizationScope = {
  tenantId: 'default',
  id: 'os1a2b3c4d5e6f7g8h9i0',
  name: 'invite:member',
  description: 'Invite members',
};

/** The fields every data event carries besides `data`. */
function request(method: string, matchedRoute: string, params: Record<string, string>, status: number) {
  let path = `/api${matchedRoute}`;
  for (const [name, value] of Object.entries(params)) {
    path = path.replace(`:${name}`, value);
  }
  return { path, method, status, params, matchedRoute, ip, userAgent };
}

const actor = { type: 'application', id: 'm2m1a2b3c4d5e6f7g8h9i' };

const data = (value: unknown, method: string, route: string, params: Record<string, string>, status: number) => ({
  data: value,
  ...request(method, route, params, status),
  actor,
});

const interaction = (interactionEvent: 'SignIn' | 'Register' | 'ForgotPassword') => ({
  interactionEvent,
  sessionId: 'xN3vR0pQ8sT1uW4yZ7aB2',
  userId: user.id,
  user,
  application: { id: 'spa1a2b3c4d5e6f7g8h9' },
  userIp: ip,
  userAgent,
});

export const samplePayloads: Record<HookEvent, Record<string, unknown>> = {
  PostRegister: interaction('Register'),
  PostSignIn: interaction('SignIn'),
  PostResetPassword: interaction('ForgotPassword'),

  'User.Created': data(user, 'POST', '/users', {}, 200),
  'User.Deleted': data(user, 'DELETE', '/users/:userId', { userId: user.id }, 204),
  'User.Data.Updated': data({ ...user, name: 'Jane Q. Doe' }, 'PATCH', '/users/:userId', { userId: user.id }, 200),
  'User.SuspensionStatus.Updated': data(
    { ...user, isSuspended: true },
    'PATCH',
    '/users/:userId/is-suspended',
    { userId: user.id },
    200,
  ),

  'Role.Created': data(role, 'POST', '/roles', {}, 200),
  'Role.Deleted': data(role, 'DELETE', '/roles/:id', { id: role.id }, 204),
  'Role.Data.Updated': data(
    { ...role, description: 'Can edit and publish articles' },
    'PATCH',
    '/roles/:id',
    { id: role.id },
    200,
  ),
  'Role.Scopes.Updated': { ...data([scope], 'POST', '/roles/:id/scopes', { id: role.id }, 201), roleId: role.id },

  'Scope.Created': data(scope, 'POST', '/resources/:resourceId/scopes', { resourceId: scope.resourceId }, 201),
  'Scope.Deleted': data(
    scope,
    'DELETE',
    '/resources/:resourceId/scopes/:scopeId',
    { resourceId: scope.resourceId, scopeId: scope.id },
    204,
  ),
  'Scope.Data.Updated': data(
    { ...scope, description: 'Write and publish articles' },
    'PATCH',
    '/resources/:resourceId/scopes/:scopeId',
    { resourceId: scope.resourceId, scopeId: scope.id },
    200,
  ),

  'Organization.Created': data(organization, 'POST', '/organizations', {}, 201),
  'Organization.Deleted': data(organization, 'DELETE', '/organizations/:id', { id: organization.id }, 204),
  'Organization.Data.Updated': data(
    { ...organization, description: 'Acme, Inc.' },
    'PATCH',
    '/organizations/:id',
    { id: organization.id },
    200,
  ),
  'Organization.Membership.Updated': {
    ...data({ userIds: [user.id] }, 'POST', '/organizations/:id/users', { id: organization.id }, 201),
    organizationId: organization.id,
    addedUserIds: [user.id],
  },

  'OrganizationRole.Created': data(organizationRole, 'POST', '/organization-roles', {}, 201),
  'OrganizationRole.Deleted': data(
    organizationRole,
    'DELETE',
    '/organization-roles/:id',
    { id: organizationRole.id },
    204,
  ),
  'OrganizationRole.Data.Updated': data(
    { ...organizationRole, description: 'Manages the organization' },
    'PATCH',
    '/organization-roles/:id',
    { id: organizationRole.id },
    200,
  ),
  'OrganizationRole.Scopes.Updated': {
    ...data(null, 'POST', '/organization-roles/:id/scopes', { id: organizationRole.id }, 201),
    organizationRoleId: organizationRole.id,
  },

  'OrganizationScope.Created': data(organizationScope, 'POST', '/organization-scopes', {}, 201),
  'OrganizationScope.Deleted': data(
    organizationScope,
    'DELETE',
    '/organization-scopes/:id',
    { id: organizationScope.id },
    204,
  ),
  'OrganizationScope.Data.Updated': data(
    { ...organizationScope, description: 'Invite and remove members' },
    'PATCH',
    '/organization-scopes/:id',
    { id: organizationScope.id },
    200,
  ),

  'Identifier.Lockout': { type: 'email', value: 'jane@example.com' },
  'Message.RateLimited': { action: 'VerificationCodeSend', recipient: 'jane@example.com' },
};

/** The example of `event` in full, its envelope first, as a hook receives it. */
export const samplePayload = (event: HookEvent, hookId: string, createdAt = new Date(at).toISOString()) => ({
  hookId,
  event,
  createdAt,
  ...samplePayloads[event],
});
