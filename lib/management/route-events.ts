import type { Knex } from 'knex';
import type { Context } from 'koa';

import { outboxEffects } from '../hooks/effects.ts';
import { requestOf } from '../hooks/payloads.ts';
import type { AnyRouteInput, AnySpec, RouteEffects } from '../http/api/route.ts';
import type { EventData, EventName } from '../shared/event-data.ts';
import type { SharedCache } from '../storage/shared-cache.ts';

type Input = AnyRouteInput;
type Rule<E extends EventName = EventName> = {
  event: E;
  /** Only when this holds (an event "in parentheses" in the specification). */
  when?: (input: Input) => boolean;
  /**
   * The event's data when the handler emits none: by default the answer as `data`. An event without
   * a default (a membership change's delta) must be emitted by the handler.
   */
  data?: ((input: Input, body: unknown) => EventData[E]) | false;
};

const bodyOf = (input: Input) => (input.body ?? {}) as Record<string, unknown>;
const paramsOf = (input: Input) => (input.params ?? {}) as Record<string, string | undefined>;
const idOf = (input: Input, body: unknown) => paramsOf(input).id ?? (body as { id?: string } | undefined)?.id ?? '';
const nonEmpty = (value: unknown) => Array.isArray(value) && value.length > 0;

const event = (name: EventName): Rule => ({ event: name });
/** The handler emits it with the delta (link sets through their `changed`, an accepted invitation). */
const membership: Rule[] = [{ event: 'Organization.Membership.Updated', data: false }];
const roleScopes = (when?: Rule['when']): Rule<'Role.Scopes.Updated'> => ({
  event: 'Role.Scopes.Updated',
  when,
  data: (input, body) => ({ data: body ?? null, roleId: idOf(input, body) }),
});
const organizationRoleScopes = (when?: Rule['when']): Rule<'OrganizationRole.Scopes.Updated'> => ({
  event: 'OrganizationRole.Scopes.Updated',
  when,
  data: (input, body) => ({ data: body ?? null, organizationRoleId: idOf(input, body) }),
});

/** The specification's "management endpoint → event" table, as data. */
export const managementRouteEvents: Record<string, readonly Rule[]> = {
  'post /users': [event('User.Created')],
  'delete /users/:userId': [event('User.Deleted')],
  'patch /users/:userId': [event('User.Data.Updated')],
  'patch /users/:userId/custom-data': [event('User.Data.Updated')],
  'patch /users/:userId/profile': [event('User.Data.Updated')],
  'patch /users/:userId/password': [event('User.Data.Updated')],
  'patch /users/:userId/is-suspended': [event('User.SuspensionStatus.Updated')],
  'post /roles': [event('Role.Created'), roleScopes((input) => nonEmpty(bodyOf(input).scopeIds))],
  'delete /roles/:id': [event('Role.Deleted')],
  'patch /roles/:id': [event('Role.Data.Updated')],
  'post /roles/:id/scopes': [roleScopes()],
  'delete /roles/:id/scopes/:scopeId': [roleScopes()],
  'post /resources/:resourceId/scopes': [event('Scope.Created')],
  'delete /resources/:resourceId/scopes/:scopeId': [event('Scope.Deleted')],
  'patch /resources/:resourceId/scopes/:scopeId': [event('Scope.Data.Updated')],
  'post /organizations': [event('Organization.Created')],
  'delete /organizations/:id': [event('Organization.Deleted')],
  'patch /organizations/:id': [event('Organization.Data.Updated')],
  'put /organizations/:id/users': membership,
  'post /organizations/:id/users': membership,
  'delete /organizations/:id/users/:userId': membership,
  'put /organizations/:id/applications': membership,
  'post /organizations/:id/applications': membership,
  'delete /organizations/:id/applications/:applicationId': membership,
  'put /organization-invitations/:id/status': [
    { ...membership[0], when: (input) => bodyOf(input).status === 'Accepted' },
  ],
  'post /organization-roles': [
    event('OrganizationRole.Created'),
    organizationRoleScopes((input) => nonEmpty(bodyOf(input).organizationScopeIds)),
  ],
  'delete /organization-roles/:id': [event('OrganizationRole.Deleted')],
  'patch /organization-roles/:id': [event('OrganizationRole.Data.Updated')],
  'put /organization-roles/:id/scopes': [organizationRoleScopes()],
  'post /organization-roles/:id/scopes': [organizationRoleScopes()],
  'delete /organization-roles/:id/scopes/:organizationScopeId': [organizationRoleScopes()],
  'post /organization-scopes': [event('OrganizationScope.Created')],
  'delete /organization-scopes/:id': [event('OrganizationScope.Deleted')],
  'patch /organization-scopes/:id': [event('OrganizationScope.Data.Updated')],
};

export const routeKey = (spec: AnySpec) => `${spec.method} ${spec.path}`;

/** What the handler emitted (its `data` left out: the answer), else the rule's default. */
function dataOf(key: string, rule: Rule, emitted: object | undefined, input: Input, body: unknown) {
  if (emitted) {
    return { data: body ?? null, ...emitted } as EventData[EventName];
  }
  if (rule.data === false) {
    throw new Error(`${key}: its handler did not emit ${rule.event}`);
  }
  return rule.data ? rule.data(input, body) : { data: body ?? null };
}

/**
 * The management API's data events, as its routes' `Effects`: the table above says which events a
 * route has; its handler may `emit` only those, with their data (a delete the deleted entity, a
 * membership change its delta), and the rest take the answer as `data`. They are written to the
 * outbox after the handler, in the request's transaction, each at most once.
 */
export function managementEvents(cache: SharedCache): RouteEffects {
  return {
    declares: (spec) => routeKey(spec) in managementRouteEvents,
    open(trx: Knex.Transaction, spec, input, ctx: Context) {
      const key = routeKey(spec);
      const rules = managementRouteEvents[key] ?? [];
      const emitted = new Map<EventName, object>();
      return {
        effects: {
          emit(name, data) {
            if (!rules.some((rule) => rule.event === name)) {
              return Promise.reject(
                new Error(`${key} emits ${name}, which lib/management/route-events.ts does not give it`),
              );
            }
            emitted.set(name, data);
            return Promise.resolve();
          },
        },
        async close(body) {
          const outbox = outboxEffects(trx, cache, () => requestOf(ctx, paramsOf(input)));
          for (const rule of rules) {
            if (rule.when && !rule.when(input)) {
              continue;
            }
            await outbox.emit(rule.event, dataOf(key, rule, emitted.get(rule.event), input, body));
          }
        },
      };
    },
  };
}
