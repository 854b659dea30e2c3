/**
 * What a verification code is for, how long it lives and whom it goes to: the words that the code store
 * (experience/verification/verification-codes.ts) and the message senders beside this file both use.
 */

export type CodeIdentifier = { type: 'email' | 'phone'; value: string };

/** What a code is for: Logto's message template types, which pick the message's wording. */
export const codePurposes = [
  'SignIn',
  'Register',
  'ForgotPassword',
  'Generic',
  'UserPermissionValidation',
  'BindNewIdentifier',
  'MfaVerification',
  'BindMfa',
] as const;
export type CodePurpose = (typeof codePurposes)[number];

/** What any message is for: a code's purpose, or an invitation to join an organization. */
export const messagePurposes = [...codePurposes, 'OrganizationInvitation'] as const;
export type MessagePurpose = (typeof messagePurposes)[number];

export const codeTtlMs = 600_000;

/** The one form of a recipient that rate limits, lookups and the development store compare. */
export function recipientKey({ type, value }: CodeIdentifier): string {
  return type === 'email' ? value.trim().toLowerCase() : value.replace(/\D/g, '');
}
