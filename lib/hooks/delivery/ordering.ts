import { type HookEvent, hookEventGroup } from '../events.ts';
import { entityIdOf } from '../payloads.ts';

/**
 * Ordered delivery (a hook's `ordering: "per-entity"`): each delivery carries the entity its event
 * is about and its place in commit order; a dispatcher sends an ordered hook's delivery only when
 * no earlier one of the same entity is still pending or in flight (lib/hooks/delivery/delivery-queries.ts).
 */

const maxEntityIdLength = 128;

/**
 * `User:<id>`, `Role:<id>`, `Organization:<id>`... for the entity `event` is about: the data
 * events' entity (for a membership or scopes change, the organization or role changed), the user
 * of an interaction event. Undefined for the exception events: they are held back by nothing.
 */
export function entityKeyOf(event: HookEvent, payload: Record<string, unknown>): string | undefined {
  const group = hookEventGroup(event);
  if (group === 'exception') {
    return undefined;
  }
  const type = group === 'interaction' ? 'User' : event.slice(0, event.indexOf('.'));
  const id = entityIdOf(payload);
  const key = id === null ? undefined : `${type}:${id}`;
  return key !== undefined && key.length <= maxEntityIdLength ? key : undefined;
}
