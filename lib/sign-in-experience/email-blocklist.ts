import { z } from 'zod';

import { RequestError } from '../http/errors.ts';

/**
 * An entry of a custom list: an address (`foo@example.com`) or a domain (`@example.com`), `*`
 * standing for any run of characters in either part (`foo*@example.com`, `@*.example.com`).
 */
const listEntry = z
  .string()
  .max(254)
  .regex(/^([^\s@]+@|@)(\*\.)?[^\s@.*][^\s@]*\.[^\s@]+$/, 'an email address or @domain, * as a wildcard');

/**
 * Logto's `emailBlocklistPolicy`. `blockDisposableAddresses` asks Logto Cloud's list of disposable
 * domains, which this service does not have: turning it on is refused (`assertSupported`), as
 * Logto's open-source edition refuses it.
 */
export const emailBlocklistPolicySchema = z.strictObject({
  blockDisposableAddresses: z.boolean().optional(),
  blockSubaddressing: z.boolean().optional(),
  customAllowlist: z.array(listEntry).max(1000).optional(),
  customBlocklist: z.array(listEntry).max(1000).optional(),
});

export type EmailBlocklistPolicy = z.output<typeof emailBlocklistPolicySchema>;

/** 400 `request.invalid_input` for what the policy asks and the service cannot do (Logto's answer). */
export function assertSupported(policy: EmailBlocklistPolicy): void {
  if (policy.blockDisposableAddresses) {
    throw new RequestError(
      'request.invalid_input',
      { details: 'Disposable email domain validation is not supported by this service.' },
      { status: 400 },
    );
  }
}

const gmailDomains = ['gmail.com', 'googlemail.com'];

const wildcardPattern = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`);

const matches = (pattern: string, value: string) =>
  pattern.includes('*') ? wildcardPattern(pattern).test(value) : pattern === value;

/**
 * Whether an address falls under an entry, case-insensitively. Gmail ignores dots in the local part
 * and answers for both of its domains, so an entry names every spelling of such a mailbox.
 */
function matchesEntry(entry: string, email: string): boolean {
  const item = entry.toLowerCase();
  const [local, domain] = email.toLowerCase().split('@') as [string, string];
  const isGmail = gmailDomains.includes(domain);
  if (item.startsWith('@')) {
    return (isGmail ? gmailDomains : [domain]).some((candidate) => matches(item.slice(1), candidate));
  }
  if (!isGmail) {
    return matches(item, `${local}@${domain}`);
  }
  const [itemLocal, itemDomain] = item.split('@') as [string, string];
  const comparable = `${itemLocal.replaceAll('.', '')}@${itemDomain}`;
  return gmailDomains.some((candidate) => matches(comparable, `${local.replaceAll('.', '')}@${candidate}`));
}

/**
 * 422 when the policy keeps this address from an account (Logto's codes): a `+tag` while
 * subaddressing is blocked, an address outside a non-empty allowlist, or one on the blocklist.
 */
export function assertEmailAllowed(policy: EmailBlocklistPolicy, email: string): void {
  const [local] = email.split('@');
  if (policy.blockSubaddressing && local.includes('+')) {
    throw new RequestError('session.email_blocklist.email_subaddressing_not_allowed');
  }
  const allowlist = policy.customAllowlist ?? [];
  if (allowlist.length > 0 && !allowlist.some((entry) => matchesEntry(entry, email))) {
    throw new RequestError('session.email_blocklist.email_not_allowed', { email });
  }
  if ((policy.customBlocklist ?? []).some((entry) => matchesEntry(entry, email))) {
    throw new RequestError('session.email_blocklist.email_not_allowed', { email });
  }
}
