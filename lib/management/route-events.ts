import type { Knex } from 'knex';
import type { Context } from 'koa';

import type { HookEvent } from '../hooks/events.ts';
import { enqueueEvent } from '../hooks/outbox.ts';
import type { AnyRouteInput, AnySpec, RouteEffects } from '../http/route.ts';
import type { MembershipDelta } from '../organizations/members/memberships.ts';
import type { SharedCache } from '../storage/shared-cache.ts';

type Input = AnyRouteInput;
type Rule = {
  event: HookEvent;
  /** Only when this holds (an event "in parentheses" in the specification). */
  when?: (input: Input) => boolean;
  /** Top-level payload fields besides the envelope (the role a scope change is about, ...). */
  extra?: (input: Input, body: unknown, ctx: Context) => Record<string, unknown>;
};

const bodyOf = (input: Input) => (input.body ?? {}) as Record<string, unknown>;
const paramsOf = (input: Input) => (input.params ?? {}) as Record<string, string | undefined>;
const idOf = (input: Input, body: unknown) => paramsOf(input).id ?? (body as { id?: string } | undefined)?.id;
const nonEmpty = (value: unknown) => Array.isArray(value) && value.length > 0;

/** `organizationId`, and the delta fields that are not empty (docs/webhooks.md, "Data mutation events"); the handler put the delta on the state. */
function membershipFields(_input: Input, _body: unknown, ctx: Context): Record<string, unknown> {
  const delta = ctx.state.membershipDelta as MembershipDelta | undefined;
  if (!delta) {
    return {};
  }
  return Object.fromEntries(
    Object.entries(delta).filter(([key, value]) => key === 'organizationId' || nonEmpty(value)),
  );
}

const membership: Rule[] = [{ event: 'Organization.Membership.Updated', extra: membershipFields }];
const roleScopes = (when?: Rule['when']): Rule => ({
  event: 'Role.Scopes.Updated',
  when,
  extra: (input, body) => ({ roleId: idOf(input, body) }),
});
const organizationRoleScopes = (when?: Rule['when']): Rule => ({
  event: 'OrganizationRole.Scopes.Updated',
  when,
  extra: (input, body) => ({ organizationRoleId: idOf(input, body) }),
});

/** The specification's "management endpoint → event" table, as data. */
export const managementRouteEvents: Record<string, Rule[]> = {
  'post /users': [{ event: 'User.Created' }],
  'delete /users/:userId': [{ event: 'User.Deleted' }],
  'patch /users/:userId': [{ event: 'User.Data.Updated' }],
  'patch /users/:userId/custom-data': [{ event: 'User.Data.Updated' }],
  'patch /users/:userId/profile': [{ event: 'User.Data.Updated' }],
  'patch /users/:userId/password': [{ event: 'User.Data.Updated' }],
  'patch /users/:userId/is-suspended': [{ event: 'User.SuspensionStatus.Updated' }],
  'post /roles': [{ event: 'Role.Created' }, roleScopes((input) => nonEmpty(bodyOf(input).scopeIds))],
  'delete /roles/:id': [{ event: 'Role.Deleted' }],
  'patch /roles/:id': [{ event: 'Role.Data.Updated' }],
  'post /roles/:id/scopes': [roleScopes()],
  'delete /roles/:id/scopes/:scopeId': [roleScopes()],
  'post /resources/:resourceId/scopes': [{ event: 'Scope.Created' }],
  'delete /resources/:resourceId/scopes/:scopeId': [{ event: 'Scope.Deleted' }],
  'patch /resources/:resourceId/scopes/:scopeId': [{ event: 'Scope.Data.Updated' }],
  'post /organizations': [{ event: 'Organization.Created' }],
  'delete /organizations/:id': [{ event: 'Organization.Deleted' }],
  'patch /organizations/:id': [{ event: 'Organization.Data.Updated' }],
  'put /organizations/:id/users': membership,
  'post /organizations/:id/users': membership,
  'delete /organizations/:id/users/:userId': membership,
  'put /organizations/:id/applications': membership,
  'post /organizations/:id/applications': membership,
  'delete /organizations/:id/applications/:applicationId': membership,
  'put /organization-invitations/:id/status': [
    {
      event: 'Organization.Membership.Updated',
      when: (input) => bodyOf(input).status === 'Accepted',
      extra: membershipFields,
    },
  ],
  'post /organization-roles': [
    { event: 'OrganizationRole.Created' },
    organizationRoleScopes((input) => nonEmpty(bodyOf(input).organizationScopeIds)),
  ],
  'delete /organization-roles/:id': [{ event: 'OrganizationRole.Deleted' }],
  'patch /organization-roles/:id': [{ event: 'OrganizationRole.Data.Updated' }],
  'put /organization-roles/:id/scopes': [organizationRoleScopes()],
  'post /organization-roles/:id/scopes': [organizationRoleScopes()],
  'delete /organization-roles/:id/scopes/:organizationScopeId': [organizationRoleScopes()],
  'post /organization-scopes': [{ event: 'OrganizationScope.Created' }],
  'delete /organization-scopes/:id': [{ event: 'OrganizationScope.Deleted' }],
  'patch /organization-scopes/:id': [{ event: 'OrganizationScope.Data.Updated' }],
};

const routeKey = (spec: AnySpec) => `${spec.method} ${spec.path}`;

/**
 * Data events of the management API, written to the webhook outbox in the request's transaction.
 * `data` is the response body; a delete (no body) puts the deleted entity on `ctx.state.eventData`.
 */
export function managementEvents(cache: SharedCache): RouteEffects {
  return {
    applies: (spec) => routeKey(spec) in managementRouteEvents,
    async record(trx: Knex.Transaction, spec, input, body, ctx) {
      for (const rule of managementRouteEvents[routeKey(spec)] ?? []) {
        if (rule.when && !rule.when(input)) {
          continue;
        }
        await enqueueEvent(trx, cache, rule.event, {
          data: ctx.state.eventData ?? body ?? null,
          path: ctx.path,
          method: ctx.method,
          status: ctx.status,
          params: paramsOf(input),
          matchedRoute: spec.path,
          ip: ctx.ip,
          userAgent: ctx.get('user-agent'),
          ...rule.extra?.(input, body, ctx),
        });
      }
    },
  };
}
