import { createHash } from 'node:crypto';

import type { PwnedLookup } from './password-policy.ts';

/** How long a lookup may take before the password is let through. */
const timeoutMs = 2000;

/** Where a failed lookup is reported: the service's logger, or the CLI's. */
export type WarnLog = { warn(fields: object, message: string): void };

/**
 * Have I Been Pwned's range API, k-anonymity style: only the first five hex digits of the
 * password's SHA-1 leave the service (`GET <base>/range/<prefix>`), and the answer (`SUFFIX:COUNT`
 * lines, padded with zero counts) is searched here for the rest. Fail-open: an unreachable, slow
 * or failing service lets the password through and logs a warning naming neither the password nor
 * its hash; the other rules of the policy still apply.
 */
export function pwnedPasswordLookup(baseUrl: string, log: WarnLog): PwnedLookup {
  return async (password) => {
    const hash = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
    const suffix = hash.slice(5);
    try {
      const response = await fetch(`${baseUrl}/range/${hash.slice(0, 5)}`, {
        headers: { 'add-padding': 'true' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) {
        throw new Error(`answered ${response.status}`);
      }
      return (await response.text()).split('\n').some((line) => {
        const [candidate, count] = line.trim().split(':');
        return candidate.toUpperCase() === suffix && Number(count) > 0;
      });
    } catch (error) {
      log.warn(
        { service: baseUrl, reason: reasonOf(error) },
        'breached-password lookup failed: the password was accepted without it (fail-open)',
      );
      return false;
    }
  };
}

/** What went wrong, without the request's URL (it holds the hash's prefix). */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) {
    return 'unknown error';
  }
  if (error.name === 'TimeoutError') {
    return `no answer within ${timeoutMs} ms`;
  }
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? `${error.message} (${cause.code})` : error.message;
}
