import { z } from 'zod';

import { RequestError } from '../../http/errors.ts';
import { verificationOwed } from '../../mfa/sign-in-requirement.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import type { UserRow } from '../../users/queries.ts';
import { getUserRow } from '../../users/users.ts';
import type { ExperienceSession } from '../session.ts';
import type { VerificationRecord } from '../state-queries.ts';

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

/**
 * Logto's guard of the steps that change what a sign-in binds to the account (profile, factors, a
 * declined prompt): not in a password reset (400), after identification (404), and in a sign-in,
 * once an account that has a second factor proved it (403). Answers the identified user's row.
 */
export async function verifiedInteraction(
  db: Queryable,
  cache: SharedCache,
  session: ExperienceSession,
): Promise<UserRow> {
  if (session.state.interactionEvent === 'ForgotPassword') {
    throw new RequestError('session.not_supported_for_forgot_password', undefined, { status: 400 });
  }
  const user = await getUserRow(db, identifiedUser(session));
  if (session.state.interactionEvent === 'SignIn') {
    const owed = await verificationOwed(db, await currentSignInExperience(db, cache), user, session.state.mfa);
    if (owed) {
      throw owed;
    }
  }
  return user;
}
