import { parsePhoneNumberWithError } from 'libphonenumber-js';

/**
 * A phone number as users hold it (E.164 digits, no `+`) and the other form people type for the same
 * number: the national trunk `0` kept after the country code (`61 0412 345 678` for `61 412 345 678`).
 * Logto stores the first and treats both as one number, and so do we. A value libphonenumber cannot
 * read (an unknown country code, too short) stays as given, matched exactly.
 */
export type PhoneForms = { stored: string; withTrunkZero?: string };

export function phoneForms(value: string): PhoneForms {
  const digits = value.replace(/^\+/, '');
  try {
    const { countryCallingCode, nationalNumber } = parsePhoneNumberWithError(`+${digits}`);
    // libphonenumber drops one trunk 0; Logto drops them all (`+1 000123456789` is `1123456789`).
    const national = nationalNumber.replace(/^0+/, '');
    return {
      stored: `${countryCallingCode}${national}`,
      withTrunkZero: `${countryCallingCode}0${national}`,
    };
  } catch {
    return { stored: digits };
  }
}

/** Every stored value that is this number: the stored form first. */
export const phoneMatches = (value: string): string[] => {
  const { stored, withTrunkZero } = phoneForms(value);
  return withTrunkZero ? [stored, withTrunkZero] : [stored];
};
