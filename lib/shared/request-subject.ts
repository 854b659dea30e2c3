import type { Context } from 'koa';

/**
 * Who a request acts as, noted by the code that authenticates it (the management token, the
 * interaction cookie, the Account API's token), for the audit trail to read once it is answered and
 * for webhook events to name their `actor`. Below every domain: both read it.
 */
export type AuditSubject = {
  kind: 'management' | 'interaction' | 'account';
  userId?: string;
  applicationId?: string;
  /** Interactions: sign-in, registration or reset, and the identifiers named so far by verification id. */
  interactionEvent?: string;
  identifiers?: Map<string, { type: string; value: string }>;
};

export function noteAuditSubject(ctx: Context, subject: AuditSubject): void {
  ctx.state.auditSubject = subject;
}

export const auditSubjectOf = (ctx: Context): AuditSubject | undefined =>
  ctx.state.auditSubject as AuditSubject | undefined;
