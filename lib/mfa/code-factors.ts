/**
 * Email and phone codes as second factors (Logto's `EmailVerificationCode`, `PhoneVerificationCode`).
 * Nothing is enrolled for them: a user has the factor while the settings enable it and the account
 * has that primary email or phone, and proves it with a code sent there.
 */

export const codeFactorTypes = ['EmailVerificationCode', 'PhoneVerificationCode'] as const;
export type CodeFactorType = (typeof codeFactorTypes)[number];

export type ChannelAddresses = { primaryEmail?: string | null; primaryPhone?: string | null };

/** The factor a channel's codes prove, and back. */
export const codeFactorOf = (channel: 'email' | 'phone'): CodeFactorType =>
  channel === 'email' ? 'EmailVerificationCode' : 'PhoneVerificationCode';

export const addressFor = (factor: CodeFactorType, addresses: ChannelAddresses): string | undefined =>
  (factor === 'EmailVerificationCode' ? addresses.primaryEmail : addresses.primaryPhone) ?? undefined;

/** The code factors of `enabled` that `addresses` give the user, in Logto's order (email, then phone). */
export const codeFactorsOf = (enabled: readonly string[], addresses: ChannelAddresses): CodeFactorType[] =>
  codeFactorTypes.filter((factor) => enabled.includes(factor) && addressFor(factor, addresses));

/**
 * Logto's mask: `jade.smith@example.com` → `jade****@example.com` (a local part of four characters
 * or fewer shows none: `****@example.com`): enough for the owner to recognise, little for anyone else.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  const name = at < 0 ? email : email.slice(0, at);
  return `${name.length > 4 ? name.slice(0, 4) : ''}****@${at < 0 ? '' : email.slice(at + 1)}`;
}

/** `15550001234` → `****1234`. */
export const maskPhone = (phone: string): string => `****${phone.slice(-4)}`;

/** Where each of `factors`' codes would go, masked (Logto's `maskedIdentifiers`). */
export function maskedIdentifiers(
  factors: readonly string[],
  addresses: ChannelAddresses,
): Partial<Record<CodeFactorType, string>> {
  const masked: Partial<Record<CodeFactorType, string>> = {};
  for (const factor of codeFactorTypes) {
    const address = factors.includes(factor) ? addressFor(factor, addresses) : undefined;
    if (address) {
      masked[factor] = factor === 'EmailVerificationCode' ? maskEmail(address) : maskPhone(address);
    }
  }
  return masked;
}
