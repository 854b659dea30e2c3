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

/** Logto's symbols; any character outside letters, digits and these is `unsupported_characters`. */
const symbols = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~ ';

/** The kinds of character a password holds, or undefined when it holds one of no kind. */
function characterKinds(password: string): number | undefined {
  const kinds = new Set<string>();
  for (const char of password) {
    const kind =
      char >= 'a' && char <= 'z'
        ? 'lower'
        : char >= 'A' && char <= 'Z'
          ? 'upper'
          : char >= '0' && char <= '9'
            ? 'digit'
            : symbols.includes(char)
              ? 'symbol'
              : undefined;
    if (!kind) {
      return undefined;
    }
    kinds.add(kind);
  }
  return kinds.size;
}

/** Runs counted as sequences: digits, the alphabet, keyboard rows and columns, either way, one case. */
const sequences = [
  '0123456789',
  'abcdefghijklmnopqrstuvwxyz',
  'qwertyuiop',
  'asdfghjkl',
  'zxcvbnm',
  '1qaz',
  '2wsx',
  '3edc',
  '4rfv',
  '5tgb',
  '6yhn',
  '7ujm',
  '8ik',
  '9ol',
].flatMap((run) => {
  // The runs are ASCII: a character is a code unit.
  const reversed = run.split('').reverse().join('');
  return [run, reversed, run.toUpperCase(), reversed.toUpperCase()];
});

/** A repetition or sequence counts from three characters on (`aaa`, `abc`, `321`). */
const shortestRun = 3;

/** How long the repetition of its first character is at the start of `text` (0 under three). */
function repetitionAt(text: string): number {
  let length = 0;
  while (length < text.length && text[length] === text[0]) {
    length++;
  }
  return length >= shortestRun ? length : 0;
}

/** How long the sequence is at the start of `text` (0 under three). */
function sequenceAt(text: string): number {
  let length = 1;
  while (length < text.length && sequences.some((run) => run.includes(text.slice(0, length + 1)))) {
    length++;
  }
  return length >= shortestRun ? length : 0;
}

/** The longest of `phrases` (compared without case) that `text` starts with. */
const longestPrefix = (text: string, phrases: Array<string | null | undefined>): number =>
  Math.max(
    0,
    ...phrases.map((phrase) => (phrase && text.toLowerCase().startsWith(phrase.toLowerCase()) ? phrase.length : 0)),
  );

export type UserInfo = {
  username?: string | null;
  primaryEmail?: string | null;
  primaryPhone?: string | null;
  name?: string | null;
};

/** What of the person a password must not be made of: the name (whole, joined, each word), username, email's local part, phone. */
const userPhrases = (user: UserInfo): Array<string | null | undefined> => [
  user.name,
  user.name?.replaceAll(/\s+/g, ''),
  ...(user.name?.split(' ') ?? []),
  user.username,
  user.primaryEmail?.split('@')[0],
  user.primaryPhone,
];

/** A password may hold restricted phrases as long as more than three of its characters are outside them (Logto's tolerance). */
const tolerance = 3;

/** The length and the kinds of character a password holds. */
function basicIssues(password: string, policy: PasswordPolicy): PasswordIssue[] {
  const issues: PasswordIssue[] = [];
  if (password.length < policy.length.min) {
    issues.push({ code: 'password_rejected.too_short', interpolation: { min: policy.length.min } });
  } else if (password.length > policy.length.max) {
    issues.push({ code: 'password_rejected.too_long', interpolation: { max: policy.length.max } });
  }
  const kinds = characterKinds(password);
  if (kinds === undefined) {
    issues.push({ code: 'password_rejected.unsupported_characters' });
  } else if (kinds < policy.characterTypes.min) {
    issues.push({ code: 'password_rejected.character_types', interpolation: { min: policy.characterTypes.min } });
  }
  return issues;
}

/**
 * The restricted phrases (repetitions, sequences, the policy's words, the person's own details)
 * reject a password only when they cover all of it but three characters or fewer (Logto's rule,
 * so that what Logto accepts is accepted): `Xq9!abc#Lm` passes, `abcd1234` does not.
 */
function restrictedIssues(password: string, policy: PasswordPolicy, user: UserInfo): PasswordIssue[] {
  const { repetitionAndSequence, words, userInfo } = policy.rejects;
  const covered = new Array<boolean>(password.length).fill(false);
  const found = new Set<string>();
  const cover = (start: number, length: number, code: string) => {
    if (length > 0) {
      covered.fill(true, start, start + length);
      found.add(code);
    }
  };
  for (let start = 0; start < password.length; start++) {
    const rest = password.slice(start);
    if (repetitionAndSequence) {
      cover(start, repetitionAt(rest), 'password_rejected.restricted.repetition');
      cover(start, sequenceAt(rest), 'password_rejected.restricted.sequence');
    }
    cover(start, longestPrefix(rest, words), 'password_rejected.restricted.words');
    if (userInfo) {
      cover(start, longestPrefix(rest, userPhrases(user)), 'password_rejected.restricted.user_info');
    }
  }
  const tooMuch = covered.filter(Boolean).length > Math.max(1, password.length - tolerance);
  return tooMuch ? [...found].map((code) => ({ code })) : [];
}

/** Whether a password is in a breach corpus (`pwned-passwords.ts`); false when that cannot be told. */
export type PwnedLookup = (password: string) => Promise<boolean>;

/** What a new password is checked against: the policy in force, and the lookup its `rejects.pwned` needs. */
export type PasswordRules = { policy: PasswordPolicy; isPwned: PwnedLookup };

/** 422 `password.rejected` with every reason, in Logto's order (`password_rejected.pwned` among them). */
export async function assertPasswordAccepted(
  password: string,
  { policy, isPwned }: PasswordRules,
  user: UserInfo = {},
): Promise<void> {
  const issues = [
    ...basicIssues(password, policy),
    ...(policy.rejects.pwned && (await isPwned(password)) ? [{ code: 'password_rejected.pwned' }] : []),
    ...restrictedIssues(password, policy, user),
  ];
  if (issues.length > 0) {
    throw new RequestError('password.rejected', {
      data: { issues },
    });
  }
}
