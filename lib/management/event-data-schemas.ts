import { z } from 'zod';

import type { DataHookEvent } from '../hooks/events.ts';
import type { AnySpec } from '../http/api/route.ts';
import { organizationRoleSchema, organizationSchema, organizationScopeSchema } from '../organizations/schemas.ts';
import { scopeSchema } from '../resources/schemas.ts';
import { roleSchema } from '../roles/schemas.ts';
import { userSchema } from '../users/schemas.ts';
import { managementRouteEvents, routeKey } from './route-events.ts';

/** The entity each family of data events is about: a delete's `data`, and the end user's flows' (a user). */
const entities: Array<[prefix: string, schema: z.ZodType]> = [
  ['User.', userSchema],
  ['Role.', roleSchema],
  ['Scope.', scopeSchema],
  ['OrganizationRole.', organizationRoleSchema],
  ['OrganizationScope.', organizationScopeSchema],
  ['Organization.', organizationSchema],
];

/**
 * What each data event's `data` may be, for its JSON Schema (lib/hooks/event-schemas.ts): the entity
 * of its family, what the routes that emit it answer (lib/management/route-events.ts says which),
 * and null where a route answers nothing (a scope unlinked, a membership changed, JIT provisioning).
 */
export function eventDataSchemas(specs: AnySpec[]): Map<DataHookEvent, z.ZodType[]> {
  const byEvent = new Map<DataHookEvent, z.ZodType[]>();
  const add = (event: DataHookEvent, schema: z.ZodType) => {
    const known = byEvent.get(event) ?? [];
    byEvent.set(event, known.includes(schema) ? known : [...known, schema]);
  };
  for (const spec of specs) {
    for (const rule of managementRouteEvents[routeKey(spec)] ?? []) {
      const event = rule.event as DataHookEvent;
      const entity = entities.find(([prefix]) => event.startsWith(prefix))?.[1];
      if (entity && !event.endsWith('.Scopes.Updated') && event !== 'Organization.Membership.Updated') {
        add(event, entity);
      }
      add(event, spec.response ?? z.null());
    }
  }
  add('Organization.Membership.Updated', z.null());
  return byEvent;
}
