import type { Context } from 'koa';

import { outboxEffects } from '../hooks/effects.ts';
import { byUser, requestOf } from '../hooks/payloads.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { findUser } from '../users/queries.ts';
import type { InteractionEvent } from './state-queries.ts';

/**
 * The webhook events of end-user flows, written in the caller's transaction like the management
 * API's. Interaction events carry who and through which application; data events the user as the
 * management API shows it.
 */
export async function recordInteractionEvent(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  event: 'PostRegister' | 'PostSignIn' | 'PostResetPassword',
  details: { interactionEvent: InteractionEvent; userId: string; applicationId?: string; sessionId?: string },
): Promise<void> {
  const user = await findUser(trx, details.userId);
  await outboxEffects(trx, cache, requestOf(ctx)).emit(event, { ...details, user });
}

/** A user data event caused by an end user (registration, reset, linking an email or phone). */
export async function recordUserDataEvent(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  event: 'User.Created' | 'User.Data.Updated',
  userId: string,
): Promise<void> {
  await outboxEffects(trx, cache, byUser(requestOf(ctx), userId)).emit(event, { data: await findUser(trx, userId) });
}

/** Security exceptions: an identifier locked, a recipient over its send limit. */
export async function recordExceptionEvent(
  db: Queryable,
  cache: SharedCache,
  event: 'Identifier.Lockout' | 'Message.RateLimited',
  fields: { type: string; value: string } | { action: 'VerificationCodeSend'; recipient: string },
): Promise<void> {
  await outboxEffects(db, cache).emit(event, fields);
}
