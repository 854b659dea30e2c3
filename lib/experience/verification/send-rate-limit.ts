import { RequestError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/database.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { countSendsSince, deleteSendsUpTo, insertSend, lockRecipient } from './message-send-queries.ts';

/** At most this many verification messages per recipient in any window of `sendWindowMs` (Logto's default). */
export const maxSendsPerWindow = 10;
export const sendWindowMs = 600_000;

export type SendLimit = { maxSends: number; windowMs: number };

/**
 * The 429 of a refused send. A distinct class so the end-user paths (Experience API, Account API) can
 * catch it and emit `Message.RateLimited {action: 'VerificationCodeSend', recipient}`; management
 * paths let it through as a plain RequestError and emit nothing.
 */
export class MessageRateLimited extends RequestError<'request.message_rate_limited'> {
  /** The normalised recipient (lower-cased email, phone digits), as the event reports it. */
  readonly recipient: string;

  constructor(recipient: string) {
    super('request.message_rate_limited');
    this.recipient = recipient;
  }
}

/**
 * Records one send to `recipient` at `now` (ms), or throws MessageRateLimited when the window is full.
 * A refused send is not recorded, so a flood of refused requests does not extend the block.
 *
 * Count and insert run in one transaction behind the recipient's row in `message_recipients`,
 * taken by one upsert (a write lock at once, even for a recipient never seen before), so instances
 * sending at once cannot both take the last slot.
 */
export async function assertSendAllowed(
  db: Queryable,
  recipient: string,
  now: number,
  { maxSends, windowMs }: SendLimit = { maxSends: maxSendsPerWindow, windowMs: sendWindowMs },
): Promise<void> {
  const since = now - windowMs;
  await withTransaction(db, async (trx) => {
    await lockRecipient(trx, recipient, now);
    if ((await countSendsSince(trx, recipient, since)) >= maxSends) {
      throw new MessageRateLimited(recipient);
    }
    await insertSend(trx, recipient, now);
  });
  await deleteSendsUpTo(db, recipient, since);
}
