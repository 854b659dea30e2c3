import { RequestError } from '../http/errors.ts';
import { currentCaptchaProvider } from '../sign-in-experience/captcha/captcha-queries.ts';
import { captchaVerifier } from '../sign-in-experience/captcha/verifier.ts';
import type { SignInExperience } from '../sign-in-experience/schemas.ts';
import type { ExperienceContext } from './context.ts';
import type { ExperienceState, VerificationRecord } from './state-queries.ts';

/**
 * Proofs that vouch for a person as a captcha would, so that the interaction needs none after them
 * (Logto's `skipCaptcha`): an outside IdP's sign-in, a magic link, a passkey.
 */
const vouchingProofs: ReadonlySet<VerificationRecord['type']> = new Set<VerificationRecord['type']>([
  'Social',
  'EnterpriseSso',
  'OneTimeToken',
  'SignInPasskey',
]);

/**
 * With the captcha policy on, where Logto asks: before a registration creates its account, before a
 * code goes to an address while no one is identified, and at submit (sign-in, registration, password
 * reset). 422 `session.captcha_required` unless the interaction began with an accepted token or holds
 * a proof that vouches for the person. Derived from the stored state each time: a client cannot
 * claim it.
 */
export function assertCaptchaPassed(settings: SignInExperience, state: ExperienceState): void {
  if (!settings.captchaPolicy.enabled || state.captchaVerified) {
    return;
  }
  if (Object.values(state.records).some((record) => record.verified && vouchingProofs.has(record.type))) {
    return;
  }
  throw new RequestError('session.captcha_required');
}

/**
 * The token of `PUT /experience`, checked by the captcha provider. Fail-closed: a token refused, no
 * provider set up, or a verifier that does not answer (down, slow, another shape) all refuse the
 * request with 422 `session.captcha_failed`; the log line says which for the operator, without the
 * token or the secret key.
 */
export function captchaCheck({ db, cache, config, logger }: ExperienceContext): (token: string) => Promise<void> {
  const verify = captchaVerifier(config);
  return async (token) => {
    const provider = await currentCaptchaProvider(db, cache);
    if (!provider) {
      logger.warn({}, 'a captcha token was refused: no captcha provider is set up (PUT /api/captcha-provider)');
      throw new RequestError('session.captcha_failed');
    }
    const verdict = await verify(provider.config, token);
    if (verdict.passed) {
      return;
    }
    const fields = { captchaProvider: provider.config.type, outcome: verdict.outcome, detail: verdict.detail };
    // A refused token is what a bot's attempt looks like; a verifier that gives no answer needs the operator.
    if (verdict.outcome === 'rejected') {
      logger.info(fields, 'a captcha token was refused by its verifier');
    } else {
      logger.warn(fields, 'a captcha token was refused: its verifier gave no usable answer (fail-closed)');
    }
    throw new RequestError(
      'session.captcha_failed',
      verdict.outcome === 'unavailable'
        ? { reason: 'The captcha could not be checked right now. Please try again.' }
        : undefined,
    );
  };
}
