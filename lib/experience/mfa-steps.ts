import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import type { ExperienceSession } from './session.ts';
import type { VerificationRecord } from './state-queries.ts';

/** What the second-factor routes share: TOTP and backup codes, email and phone codes, passkeys. */
export const mfaTag = 'Experience MFA';

export const verificationResponse = z.object({ verificationId: z.string() });

/** Second factors happen after identification: they belong to a known user. */
export function identifiedUser(session: ExperienceSession): string {
  const { userId } = session.state;
  if (!userId) {
    throw new RequestError('session.identifier_not_found', { reason: 'Identify the user first.' });
  }
  return userId;
}

/** Stores a verification record in the interaction (with `changes` to the state), answering its id. */
export async function saveRecord(
  session: ExperienceSession,
  record: VerificationRecord,
  changes: Partial<ExperienceSession['state']> = {},
): Promise<string> {
  await session.save({ ...session.state, ...changes, records: { ...session.state.records, [record.id]: record } });
  return record.id;
}
