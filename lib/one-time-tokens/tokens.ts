import { RequestError } from '../http/errors.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId, generateSecret } from '../storage/ids.ts';
import { findOneTimeTokenByValue, insertOneTimeToken, markExpired, updateOneTimeTokenStatus } from './queries.ts';
import type { OneTimeToken } from './schemas.ts';

const defaultLifetimeSeconds = 600;

/** A new token for `email`: 32 characters of 62 (190 bits), for a link the application sends. */
export async function createOneTimeToken(
  db: Queryable,
  input: { email: string; expiresIn?: number; context?: OneTimeToken['context'] },
): Promise<OneTimeToken> {
  await markExpired(db, input.email);
  return insertOneTimeToken(db, {
    id: generateId(),
    email: input.email,
    token: generateSecret(),
    context: input.context ?? {},
    expiresAt: Date.now() + (input.expiresIn ?? defaultLifetimeSeconds) * 1000,
  });
}

/**
 * The token, checked in Logto's order (it exists, for this email, not used, not revoked, not
 * expired), and `accept` (a check of the interaction it is used in) before it is spent. Spending is
 * one conditional update: of two concurrent uses exactly one wins; the other is told it was used.
 */
export async function consumeOneTimeToken(
  db: Queryable,
  token: string,
  email: string,
  accept: (found: OneTimeToken) => void = () => undefined,
): Promise<OneTimeToken> {
  const found = await findOneTimeTokenByValue(db, token);
  if (!found) {
    throw new RequestError('one_time_token.token_not_found');
  }
  if (found.email.toLowerCase() !== email.toLowerCase()) {
    throw new RequestError('one_time_token.email_mismatch');
  }
  const now = Date.now();
  assertUsable(found);
  if (found.status === 'expired') {
    await updateOneTimeTokenStatus(db, found.id, 'expired');
    throw new RequestError('one_time_token.token_expired');
  }
  accept(found);
  if (!(await updateOneTimeTokenStatus(db, found.id, 'consumed', { status: 'active', unexpiredAt: now }))) {
    const again = await findOneTimeTokenByValue(db, token);
    assertUsable(again ?? { ...found, status: 'consumed' });
    throw new RequestError('one_time_token.token_expired');
  }
  return { ...found, status: 'consumed' };
}

function assertUsable(token: OneTimeToken): void {
  if (token.status === 'consumed') {
    throw new RequestError('one_time_token.token_consumed');
  }
  if (token.status === 'revoked') {
    throw new RequestError('one_time_token.token_revoked');
  }
}
