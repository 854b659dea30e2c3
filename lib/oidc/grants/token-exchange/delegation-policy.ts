import { errors } from 'oidc-provider';

import { findApplication } from '../../../applications/queries.ts';
import type { Application } from '../../../applications/schemas.ts';
import type { Queryable } from '../../../storage/database.ts';
import type { SharedCache } from '../../../storage/shared-cache.ts';
import type { ActClaim, MayActClaim } from '../token-facts.ts';
import type { Actor } from './actor-token.ts';

/** Depth of an `act` claim: how many `act` objects are nested, the outermost counted. */
export function actDepth(act: ActClaim | undefined): number {
  return act ? 1 + actDepth(act.act) : 0;
}

/**
 * The issued token's `act` (RFC 8693 §4.1): the new actor, the subject token's own chain nested
 * inside it. Without a new actor the subject's chain is kept as it is, so an exchange never hides
 * who acted before. The limit holds for the chain issued either way: a subject token may bring a
 * deeper one (an outside issuer's, or ours from before the limit was lowered).
 */
export function delegatedAct(subjectAct: ActClaim | undefined, actor: Actor | undefined, maxDepth: number) {
  const act: ActClaim | undefined = actor
    ? { sub: actor.sub, client_id: actor.facts.clientId, ...(subjectAct && { act: subjectAct }) }
    : subjectAct;
  const depth = actDepth(act);
  if (depth > maxDepth) {
    throw new errors.InvalidRequest(
      `actor chain too deep: the issued token would nest ${depth} act claims, at most ${maxDepth} are allowed`,
    );
  }
  return act;
}

/** RFC 8693 §4.4: an actor must be the one the subject token's `may_act` names (each claim present). */
export function assertMayAct(mayAct: MayActClaim | undefined, actor: Actor): void {
  if (!mayAct) {
    return;
  }
  if (mayAct.sub !== undefined && mayAct.sub !== actor.sub) {
    throw new errors.InvalidRequest(`the actor (sub ${actor.sub}) is not the one the subject token's may_act names`);
  }
  if (mayAct.client_id !== undefined && mayAct.client_id !== actor.facts.clientId) {
    throw new errors.InvalidRequest(
      `the actor's application ${actor.facts.clientId} is not the one the subject token's may_act names`,
    );
  }
}

const allowedActorsOf = (application: Application | undefined) =>
  application?.customClientMetadata.delegation?.allowedActorClientIds ?? [];

/**
 * The delegation policy of the application the user's token was issued to: when it lists actor
 * applications, only those may act for its users.
 */
export function assertDelegationPolicy(subjectApplication: Application | undefined, actor: Actor): void {
  const allowed = allowedActorsOf(subjectApplication);
  if (subjectApplication && allowed.length > 0 && !allowed.includes(actor.facts.clientId)) {
    throw new errors.InvalidRequest(
      `the actor's application ${actor.facts.clientId} may not act for users of application ${subjectApplication.id} (its delegation.allowedActorClientIds)`,
    );
  }
}

/**
 * `may_act` for a user's token issued to an application whose policy names exactly one actor
 * application: the token itself then says who may act with it, for any issuer's rules to check.
 */
export function mayActClaim(db: Queryable, cache: SharedCache) {
  return async (clientId: string): Promise<{ may_act: MayActClaim } | undefined> => {
    const application = await cache.get('applications', `application:${clientId}`, () => findApplication(db, clientId));
    const allowed = allowedActorsOf(application);
    return allowed.length === 1 ? { may_act: { client_id: allowed[0] } } : undefined;
  };
}

/** The chain as a list, the current actor first: how the audit log records it. */
export function actorChain(act: ActClaim | undefined): Array<{ sub: string; clientId?: string }> {
  return act ? [{ sub: act.sub, ...(act.client_id && { clientId: act.client_id }) }, ...actorChain(act.act)] : [];
}
