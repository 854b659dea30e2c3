import argon2 from 'argon2';

import { digestMatches, fastAlgorithms, ownAlgorithm } from './password-digests.ts';

/** Argon2id with OWASP's minimum: 19 MiB, 2 passes, 1 lane (about 20 ms here). */
const options = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, options);

/** A user's password as the row holds it: the digest and the algorithm that made it. */
export type StoredPassword = { password_digest: string | null; password_algorithm: string | null };

const algorithmOf = (stored: StoredPassword) => stored.password_algorithm ?? ownAlgorithm;

/**
 * Verifies against the user's digest, ours or an imported one (Argon2 with other parameters, bcrypt,
 * SHA, MD5, Logto's Legacy). A refusal costs at least one Argon2 check whatever the digest, so timing
 * tells neither whether the account has a password nor which algorithm holds it.
 */
export async function verifyPassword(stored: StoredPassword, password: string): Promise<boolean> {
  const digest = stored.password_digest;
  const algorithm = algorithmOf(stored);
  const matches = digest !== null && (await digestMatches(algorithm, digest, password));
  if (!matches && (digest === null || fastAlgorithms.has(algorithm))) {
    await verifyNothing(password);
  }
  return matches;
}

/** Whether a verified password should be hashed again with ours (it was imported with another algorithm). */
export const needsRehash = (stored: StoredPassword): boolean =>
  stored.password_digest !== null && algorithmOf(stored) !== ownAlgorithm;

/** The cost of a verification when there is no user, so timing does not tell whether one exists. */
const decoy = hashPassword('decoy password for unknown users');
export async function verifyNothing(password: string): Promise<false> {
  await argon2.verify(await decoy, password).catch(() => false);
  return false;
}
