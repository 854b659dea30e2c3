import { RequestError } from '../http/errors.ts';
import type { SignInExperience } from './schemas.ts';

/**
 * Logto's rules for the sign-up settings (400):
 * - secondary identifiers need a primary one;
 * - no identifier twice (`emailOrPhone` counts as both email and phone);
 * - an email or phone, primary or secondary, must be verified: an account is never made of an
 *   address nobody proved (`passwordless_requires_verify`).
 */
export function assertSignUpSettings(signUp: SignInExperience['signUp']): void {
  const { identifiers, verify, secondaryIdentifiers = [] } = signUp;
  if (secondaryIdentifiers.length > 0 && identifiers.length === 0) {
    throw new RequestError('sign_in_experiences.missing_sign_up_identifiers');
  }
  const named = [...identifiers];
  for (const { identifier } of secondaryIdentifiers) {
    named.push(...(identifier === 'emailOrPhone' ? (['email', 'phone'] as const) : [identifier]));
  }
  if (new Set(named).size !== named.length) {
    throw new RequestError('sign_in_experiences.duplicated_sign_up_identifiers');
  }
  const anyAddress = named.some((identifier) => identifier !== 'username');
  const unverifiedSecondary = secondaryIdentifiers.some(
    ({ identifier, verify: verified }) => identifier !== 'username' && !verified,
  );
  if ((anyAddress && !verify) || unverifiedSecondary) {
    throw new RequestError('sign_in_experiences.passwordless_requires_verify');
  }
}
