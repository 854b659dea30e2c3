import { RequestError } from '../http/errors.ts';
import type { ExperienceState, InteractionEvent, VerificationRecord } from './state-queries.ts';

export const newState = (interactionEvent: InteractionEvent): ExperienceState => ({
  interactionEvent,
  records: {},
  profile: {},
});

export function getRecord(state: ExperienceState, verificationId: string | undefined): VerificationRecord {
  const record =
    verificationId && Object.hasOwn(state.records, verificationId) ? state.records[verificationId] : undefined;
  if (!record) {
    throw new RequestError('session.verification_session_not_found');
  }
  return record;
}

export function requireVerified(record: VerificationRecord): VerificationRecord {
  if (!record.verified) {
    throw new RequestError('session.verification_failed');
  }
  return record;
}

/** The user the interaction identified; before identification, 404 `session.identifier_not_found`. */
export function requireUser(state: ExperienceState): string {
  if (!state.userId) {
    throw new RequestError('session.identifier_not_found');
  }
  return state.userId;
}
