import { createHash, randomBytes } from 'node:crypto';

export type StoredBackupCode = { digest: string; usedAt: number | null };

const count = 10;

/** Ten single-use codes of 40 random bits each, shown to the user once. */
export const newBackupCodes = (): string[] => Array.from({ length: count }, () => randomBytes(5).toString('hex'));

/** A set given by an administrator (Logto's format): ten codes of ten hex digits. */
export const isBackupCodeSet = (codes: string[]): boolean =>
  codes.length === count && codes.every((code) => /^[\da-f]{10}$/i.test(code));

// The codes are random and long enough that a fast hash suffices: nothing to brute-force offline.
const digestOf = (code: string) => createHash('sha256').update(code.trim().toLowerCase()).digest('hex');

export const storedBackupCodes = (codes: string[]): StoredBackupCode[] =>
  codes.map((code) => ({ digest: digestOf(code), usedAt: null }));

/** The codes with `code` marked used, or undefined when it is not an unused code of the set. */
export function useBackupCode(
  codes: StoredBackupCode[],
  code: string,
  now = Date.now(),
): StoredBackupCode[] | undefined {
  const digest = digestOf(code);
  const index = codes.findIndex((stored) => stored.digest === digest && stored.usedAt === null);
  if (index === -1) {
    return undefined;
  }
  return codes.map((stored, position) => (position === index ? { ...stored, usedAt: now } : stored));
}

export const remainingCodes = (codes: StoredBackupCode[]): number =>
  codes.filter((stored) => stored.usedAt === null).length;
