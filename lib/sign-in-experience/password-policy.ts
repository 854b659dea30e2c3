import { z } from 'zod';

import { RequestError } from '../http/errors.ts';

/** Logto's password policy shape; the sign-in experience settings hold the one in force. */
export const passwordPolicySchema = z.strictObject({
  length: z.strictObject({ min: z.number().int().min(1).max(256), max: z.number().int().min(1).max(256) }),
  characterTypes: z.strictObject({ min: z.number().int().min(1).max(4) }),
  rejects: z.strictObject({
    pwned: z.boolean(),
    repetitionAndSequence: z.boolean(),
    userInfo: z.boolean(),
    words: z.array(z.string().min(1).max(128)).max(1000),
  }),
});

export type PasswordPolicy = z.output<typeof passwordPolicySchema>;

/** Logto's defaults, less the breached-password check (it asks a service over the network: opt in). */
export const defaultPasswordPolicy: PasswordPolicy = {
  length: { min: 8, max: 256 },
  characterTypes: { min: 1 },
  rejects: { pwned: false, repetitionAndSequence: true, userInfo: true, words: [] },
};

export type PasswordIssue = { code: string; interpolation?: Record<string, unknown> };

const characterClasses = [/[a-z]/, /[A-Z]/, /\d/, /[^\dA-Za-z]/];

/** A run of 3+ repeated characters, or 3+ consecutive ascending/descending ones (aaa, abc, 321). */
function hasRepetitionOrSequence(password: string): boolean {
  for (let index = 0; index + 2 < password.length; index++) {
    const [a, b, c] = [password.charCodeAt(index), password.charCodeAt(index + 1), password.charCodeAt(index + 2)];
    if ((a === b && b === c) || (b - a === 1 && c - b === 1) || (a - b === 1 && b - c === 1)) {
      return true;
    }
  }
  return false;
}

export type UserInfo = {
  username?: string | null;
  primaryEmail?: string | null;
  primaryPhone?: string | null;
  name?: string | null;
};

export function passwordIssues(password: string, policy: PasswordPolicy, user: UserInfo = {}): PasswordIssue[] {
  const issues: PasswordIssue[] = [];
  if (password.length < policy.length.min) {
    issues.push({ code: 'password_rejected.too_short', interpolation: { min: policy.length.min } });
  }
  if (password.length > policy.length.max) {
    issues.push({ code: 'password_rejected.too_long', interpolation: { max: policy.length.max } });
  }
  const types = characterClasses.filter((pattern) => pattern.test(password)).length;
  if (types < policy.characterTypes.min) {
    issues.push({ code: 'password_rejected.character_types', interpolation: { min: policy.characterTypes.min } });
  }
  if (policy.rejects.repetitionAndSequence && hasRepetitionOrSequence(password)) {
    issues.push({ code: 'password_rejected.repetition_or_sequence' });
  }
  const lower = password.toLowerCase();
  if (policy.rejects.userInfo) {
    const parts = [
      user.username,
      user.primaryEmail?.split('@')[0],
      user.primaryPhone,
      ...(user.name?.split(/\s+/) ?? []),
    ];
    if (parts.some((part) => part && part.length >= 3 && lower.includes(part.toLowerCase()))) {
      issues.push({ code: 'password_rejected.restricted.user_info' });
    }
  }
  if (policy.rejects.words.some((word) => lower.includes(word.toLowerCase()))) {
    issues.push({ code: 'password_rejected.restricted.words' });
  }
  return issues;
}

/** Whether a password is in a breach corpus (`pwned-passwords.ts`); false when that cannot be told. */
export type PwnedLookup = (password: string) => Promise<boolean>;

/** What a new password is checked against: the policy in force, and the lookup its `rejects.pwned` needs. */
export type PasswordRules = { policy: PasswordPolicy; isPwned: PwnedLookup };

/** 422 `password.rejected` with every reason, as Logto answers (`password_rejected.pwned` among them). */
export async function assertPasswordAccepted(
  password: string,
  { policy, isPwned }: PasswordRules,
  user: UserInfo = {},
): Promise<void> {
  const issues = passwordIssues(password, policy, user);
  if (policy.rejects.pwned && (await isPwned(password))) {
    issues.push({ code: 'password_rejected.pwned' });
  }
  if (issues.length > 0) {
    throw new RequestError('password.rejected', {
      data: { issues },
    });
  }
}
