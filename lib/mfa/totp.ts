import { Secret, TOTP } from 'otpauth';

const period = 30;

/** RFC 6238 with the parameters every authenticator app supports: SHA-1, 6 digits, 30 s. */
const totpOf = (secret: string, label = '', issuer = '') =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period, label, issuer });

/** A fresh 160-bit secret, base32 as authenticator apps expect it. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

export const isTotpSecret = (value: string): boolean => /^[A-Z2-7]{16,64}$/.test(value);

/** What an enrolment shows: the secret, and the otpauth:// URI as a QR code (a PNG data URL). */
export async function totpEnrolment(secret: string, issuer: string, accountName: string) {
  const uri = totpOf(secret, accountName, issuer).toString();
  // Loaded at the first enrolment, not at every start (with nodemailer and html-to-text, lib/messages,
  // about 12 MB resident and 135 ms of CPU per start that many deployments never use).
  const { default: QRCode } = await import('qrcode');
  return { secret, secretQrCode: await QRCode.toDataURL(uri, { margin: 1, width: 240 }), uri };
}

/**
 * The time step a code proves, if it is valid now (one step of clock drift either way) and later
 * than `lastUsedStep`: an accepted code is never accepted again (RFC 6238 §5.2).
 */
export function acceptedStep(
  secret: string,
  code: string,
  lastUsedStep: number | null,
  now = Date.now(),
): number | undefined {
  if (!/^\d{6}$/.test(code)) {
    return undefined;
  }
  const delta = totpOf(secret).validate({ token: code, timestamp: now, window: 1 });
  if (delta === null) {
    return undefined;
  }
  const step = Math.floor(now / 1000 / period) + delta;
  return lastUsedStep !== null && step <= lastUsedStep ? undefined : step;
}
