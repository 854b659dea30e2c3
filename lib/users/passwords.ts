import argon2 from 'argon2';

/** Argon2id with OWASP's minimum: 19 MiB, 2 passes, 1 lane (about 20 ms here). */
const options = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, options);

/** Verifies against any Argon2 digest (imported ones may use other parameters). */
export async function verifyPassword(digest: string | null, password: string): Promise<boolean> {
  if (!digest) {
    return false;
  }
  try {
    return await argon2.verify(digest, password);
  } catch {
    return false;
  }
}

/** The cost of a verification when there is no user, so timing does not tell whether one exists. */
const decoy = hashPassword('decoy password for unknown users');
export async function verifyNothing(password: string): Promise<false> {
  await argon2.verify(await decoy, password).catch(() => false);
  return false;
}
