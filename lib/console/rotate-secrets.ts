import type { Knex } from 'knex';

import { secretsOf } from '../storage/database.ts';
import { resealSecrets } from '../storage/sealed-columns.ts';

/**
 * `rotate-secrets`: re-encrypts every stored secret with SECRETS_ENCRYPTION_KEY, opening old ones
 * with SECRETS_ENCRYPTION_OLD_KEYS (plaintext ones from before a key was set are encrypted too).
 * Afterwards the old keys can be dropped from the environment. Run it once every instance runs
 * with the new key; it is safe to run again, and beside running instances. Returns what it did.
 */
export async function rotateSecrets(db: Knex): Promise<string> {
  const { rewritten, retiredKeyIds } = await resealSecrets(db);
  const counts = Object.entries(rewritten).map(([name, count]) => `${name} ${count}`);
  const keyId = secretsOf(db).currentKeyId;
  return (
    `${keyId ? `Encrypted with key ${keyId}` : 'Written in plaintext (no SECRETS_ENCRYPTION_KEY)'}: ${counts.join(', ')}.` +
    (retiredKeyIds.length > 0
      ? ` No secret needs key ${retiredKeyIds.join(', ')} any more: remove it from SECRETS_ENCRYPTION_OLD_KEYS.`
      : '')
  );
}
