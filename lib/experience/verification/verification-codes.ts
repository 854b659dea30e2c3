import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';

import { RequestError } from '../../http/errors.ts';
import { type CodeIdentifier, type CodePurpose, codeTtlMs, recipientKey } from '../../messages/codes.ts';
import type { Connectors, MessageAbout } from '../../messages/index.ts';
import type { Queryable } from '../../storage/database.ts';
import { generateId } from '../../storage/ids.ts';
import { assertSendAllowed } from './send-rate-limit.ts';
import {
  claimCodeTry,
  type CodeRow,
  consumeCode,
  deleteCode,
  deleteCodesExpiredBefore,
  findCodeRow,
  insertCode,
  newestUnusedCodeId,
} from './verification-code-queries.ts';

export const codeLength = 6;
/** Wrong guesses a code survives: with a million values, 5 tries give an attacker 1 chance in 200,000. */
export const maxCodeAttempts = 5;

/**
 * A plain hash of a 6-digit code is reversed for every row at once by one table of a million hashes;
 * keying the HMAC with the row's random id makes each row a search of its own. It cannot stop a
 * determined reader of the database from brute forcing one row (a million HMACs), but keeps live codes
 * out of plain sight in backups, logs and admin queries; online guessing is bounded by the try limit.
 */
const hashCode = (codeId: string, code: string): Buffer => createHmac('sha256', codeId).update(code).digest();

/**
 * Applies the recipient's send limit (throws MessageRateLimited), stores a new code and sends it
 * (unless `deliver` is false). Whether the recipient may receive one (an existing user,
 * anti-enumeration) is the caller's call.
 * Takes the pool, not a transaction: a rollback could not unsend the message.
 */
export async function sendVerificationCode(
  db: Knex,
  connectors: Connectors,
  {
    identifier,
    purpose,
    about,
    deliver = true,
  }: { identifier: CodeIdentifier; purpose: CodePurpose; about?: MessageAbout; deliver?: boolean },
): Promise<{ codeId: string; expiresAt: number }> {
  const connector = connectors[identifier.type];
  if (!connector) {
    throw new RequestError('connector.not_found', { channel: identifier.type === 'email' ? 'email' : 'SMS' });
  }
  const recipient = recipientKey(identifier);
  const now = Date.now();
  await assertSendAllowed(db, recipient, now);

  const code = String(randomInt(0, 10 ** codeLength)).padStart(codeLength, '0');
  const codeId = generateId();
  const expiresAt = now + codeTtlMs;
  await insertCode(db, {
    id: codeId,
    recipient,
    purpose,
    codeHash: hashCode(codeId, code).toString('hex'),
    createdAt: now,
    expiresAt,
  });
  // The recipient's dead codes go with each send, so the table stays small; one that expired only
  // recently is kept a while longer so that trying it still answers `expired`, not `not_found`.
  await deleteCodesExpiredBefore(db, recipient, now - codeTtlMs);

  // Not delivered (anti-enumeration): the code exists and its send counted, as for anyone else.
  if (!deliver) {
    return { codeId, expiresAt };
  }
  const to = identifier.type === 'email' ? identifier.value.trim() : recipient;
  try {
    await connector.send({ to, type: identifier.type, purpose, code, ...about });
  } catch (cause) {
    await deleteCode(db, codeId);
    // Logged by the error handler (5xx) with what the mail server said, which the client does not see.
    throw new RequestError('connector.general', { cause });
  }
  return { codeId, expiresAt };
}

/** Why a code could not take a try, in Logto's order: gone or used, then expired, then out of tries. */
function refusal(row: CodeRow | undefined, purpose: CodePurpose | undefined, now: number): RequestError {
  if (!row || row.verified_at !== null || (purpose && row.purpose !== purpose)) {
    return new RequestError('verification_code.not_found');
  }
  if (row.expires_at <= now) {
    return new RequestError('verification_code.expired');
  }
  return new RequestError('verification_code.exceed_max_try');
}

/**
 * Checks `code` against the code `codeId` sent to `identifier`, then consumes it (single use).
 * Without `codeId` (the management API's verify) the recipient's newest unused code is checked.
 * `purpose`, when given, must match the one it was sent for.
 */
export async function verifyVerificationCode(
  db: Queryable,
  {
    codeId,
    identifier,
    code,
    purpose,
  }: { codeId?: string; identifier: CodeIdentifier; code: string; purpose?: CodePurpose },
): Promise<{ codeId: string; purpose: CodePurpose }> {
  const recipient = recipientKey(identifier);
  const now = Date.now();
  const id = codeId ?? (await newestUnusedCodeId(db, recipient, purpose));
  if (!id) {
    throw new RequestError('verification_code.not_found');
  }

  // A try is taken before the comparison, atomically: concurrent guesses each spend one, so a code
  // is never compared more than maxCodeAttempts times, and the right value after that is refused too.
  const claimed = await claimCodeTry(db, { id, recipient, purpose }, now, maxCodeAttempts);
  const row = await findCodeRow(db, id, recipient);
  if (!claimed || !row) {
    throw refusal(row, purpose, now);
  }
  if (!timingSafeEqual(hashCode(id, code), Buffer.from(row.code_hash, 'hex'))) {
    throw new RequestError('verification_code.code_mismatch');
  }
  // Two right answers at once: only one consumes the code.
  if (!(await consumeCode(db, id, now))) {
    throw new RequestError('verification_code.not_found');
  }
  return { codeId: id, purpose: row.purpose };
}
