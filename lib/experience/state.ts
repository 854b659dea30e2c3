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
