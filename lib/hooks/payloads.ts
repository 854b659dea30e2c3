import type { Context } from 'koa';

import type { EventData, EventName, MembershipDelta } from '../shared/event-data.ts';
import { type AuditSubject, auditSubjectOf } from '../shared/request-subject.ts';
import { hookEventGroup } from './events.ts';

/** Who made a change: the application of a management token, or the end user of the Account or Experience API. */
export type Actor = { type: 'application' | 'user'; id: string };

/** The request that caused an event: the data events' `path` … `userAgent`, the interaction events' `userIp`, `userAgent`. */
export type EventRequest = {
  path: string;
  method: string;
  status: number;
  params: Record<string, unknown>;
  matchedRoute: string;
  ip: string;
  userAgent: string;
  actor?: Actor;
};

function actorOf(subject: AuditSubject | undefined): Actor | undefined {
  if (subject?.kind === 'management' && subject.applicationId) {
    return { type: 'application', id: subject.applicationId };
  }
  return subject?.userId ? { type: 'user', id: subject.userId } : undefined;
}

/** The request, its actor the user `userId` when its authentication named none (a registration's new user). */
export const byUser = (request: EventRequest, userId: string): EventRequest => ({
  ...request,
  actor: request.actor ?? { type: 'user', id: userId },
});

/**
 * The request of `ctx` as events name it. `matchedRoute` is the route's pattern without `/api`
 * (@koa/router's `_matchedRoute`), `params` its parsed path parameters when the route has them.
 */
export function requestOf(ctx: Context, params?: unknown): EventRequest {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return {
    path: ctx.path,
    method: ctx.method,
    status: ctx.status,
    params: { ...((params ?? ctx.params ?? {}) as Record<string, unknown>) },
    matchedRoute: (typeof matched === 'string' ? matched : ctx.path).replace(/^\/api(?=\/)/, ''),
    ip: ctx.ip,
    userAgent: ctx.get('user-agent'),
    actor: actorOf(auditSubjectOf(ctx)),
  };
}

const nonEmpty = (value: unknown) => Array.isArray(value) && value.length > 0;

/** `organizationId`, and the delta's lists that are not empty (docs/webhooks.md, "The request"). */
const membershipFields = (delta: MembershipDelta) =>
  Object.fromEntries(Object.entries(delta).filter(([key, value]) => key === 'organizationId' || nonEmpty(value)));

/**
 * The payload of `event` after the envelope (`hookId`, `event`, `createdAt`, which `enqueueEvent`
 * puts first), as CONTRACT.md §5 gives it, for every producer alike. `request` is absent only for a
 * change no request caused (the CLI's administrator); exception events never carry one.
 */
export function buildPayload<E extends EventName>(
  event: E,
  data: EventData[E],
  request: EventRequest | undefined,
): Record<string, unknown> {
  switch (hookEventGroup(event)) {
    case 'exception':
      return { ...data };
    case 'interaction': {
      const { interactionEvent, sessionId, userId, user, applicationId } = data as EventData['PostSignIn'];
      return {
        interactionEvent,
        sessionId,
        userId,
        user,
        application: applicationId ? { id: applicationId } : undefined,
        userIp: request?.ip,
        userAgent: request?.userAgent,
      };
    }
    case 'data': {
      const {
        data: entity,
        membership,
        ...extra
      } = data as EventData['User.Created'] & { membership?: MembershipDelta };
      return {
        data: entity ?? null,
        ...request,
        // Null for a change no request caused (the CLI's administrator).
        actor: request?.actor ?? null,
        ...extra,
        ...(membership ? membershipFields(membership) : {}),
      };
    }
  }
}

/**
 * The id of what an event is about: the role or organization a scopes or membership change names,
 * the entity of a data event (`params.id` when the change left no data, as a deletion), the user of
 * an interaction event. A thin payload's `entityId`, and the key of ordered delivery (ordering.ts).
 */
export function entityIdOf(payload: Record<string, unknown>): string | null {
  const data = payload.data as { id?: unknown } | null | undefined;
  const params = payload.params as { id?: unknown } | undefined;
  const named = [
    payload.roleId,
    payload.organizationRoleId,
    payload.organizationId,
    data?.id,
    params?.id,
    payload.userId,
  ];
  return named.find((value): value is string => typeof value === 'string' && value !== '') ?? null;
}

/** A thin payload's fields after the envelope (CONTRACT.md §9): nothing personal, the receiver fetches the rest. */
export const thinPayload = (deliveryId: string, payload: Record<string, unknown>) => ({
  id: deliveryId,
  entityId: entityIdOf(payload),
  actor: (payload.actor as Actor | null | undefined) ?? null,
});
