import { z } from 'zod';

import type { Config } from '../../config/env.ts';
import { GuardedGetError, type GuardedGetOptions, guardedPostJson } from '../../http/outbound/guarded-get.ts';
import type { CaptchaConfig } from './captcha-schemas.ts';

/**
 * The verifier's word on a token: it passed, it was refused (`rejected`: a bad or spent token, or
 * the operator's secret key refused), or no usable answer came (`unavailable`). Both failures refuse
 * the request (fail-closed); `detail` is for the operator's log line: the verifier's error codes or
 * what went wrong on the way, never the token or the secret key.
 */
export type CaptchaVerdict = { passed: true } | { passed: false; outcome: 'rejected' | 'unavailable'; detail: string };

export type CaptchaVerifier = (config: CaptchaConfig, token: string) => Promise<CaptchaVerdict>;

/** Logto's threshold for reCAPTCHA Enterprise's invisible score (1.0 a person, 0.0 a bot). */
const minimumScore = 0.5;

const turnstileAnswer = z.object({ success: z.boolean(), 'error-codes': z.array(z.string()).optional() });
const assessmentAnswer = z.object({
  tokenProperties: z.object({ valid: z.boolean(), invalidReason: z.string().optional() }),
  riskAnalysis: z.object({ score: z.number() }),
});

const unavailable = (detail: string): CaptchaVerdict => ({ passed: false, outcome: 'unavailable', detail });
const rejected = (detail: string): CaptchaVerdict => ({ passed: false, outcome: 'rejected', detail });

/** The answer read against `schema`: a transport failure or an answer of another shape is `unavailable`. */
async function ask<S extends z.ZodType>(
  send: () => Promise<{ body: unknown }>,
  schema: S,
): Promise<{ answer: z.output<S> } | { verdict: CaptchaVerdict }> {
  let body: unknown;
  try {
    ({ body } = await send());
  } catch (error) {
    if (error instanceof GuardedGetError) {
      return { verdict: unavailable(error.message) };
    }
    throw error;
  }
  const parsed = schema.safeParse(body);
  return parsed.success
    ? { answer: parsed.data }
    : { verdict: unavailable("the verifier's answer is not of the expected shape") };
}

/**
 * Checks tokens with Cloudflare's siteverify or Google's assessments API, at the URLs the
 * configuration names (`CAPTCHA_VERIFY_URL_*`: tests run a local stand-in), through the SSRF guard,
 * 5 s and 64 KB at most. As Logto does, no remote IP is sent, and reCAPTCHA's expected action is
 * `interaction` (the page cannot know the event the interaction ends as).
 */
export function captchaVerifier(
  config: Pick<Config, 'captchaVerifyUrls' | 'hooksAllowPrivateTargets'>,
): CaptchaVerifier {
  const limits = (subject: string): GuardedGetOptions => ({
    subject,
    allowPrivateTargets: config.hooksAllowPrivateTargets,
    timeoutMs: 5000,
    sizeLimit: 64 * 1024,
  });

  return async (provider, token) => {
    if (provider.type === 'Turnstile') {
      const asked = await ask(
        () =>
          guardedPostJson(
            config.captchaVerifyUrls.turnstile,
            {
              contentType: 'application/x-www-form-urlencoded',
              text: new URLSearchParams({ secret: provider.secretKey, response: token }).toString(),
            },
            limits('the Turnstile verify URL (CAPTCHA_VERIFY_URL_TURNSTILE)'),
          ),
        turnstileAnswer,
      );
      if ('verdict' in asked) {
        return asked.verdict;
      }
      const { success, 'error-codes': codes = [] } = asked.answer;
      return success ? { passed: true } : rejected(codes.join(', ') || 'success: false');
    }
    const asked = await ask(
      () =>
        guardedPostJson(
          `${config.captchaVerifyUrls.recaptchaEnterprise}/projects/${encodeURIComponent(provider.projectId)}/assessments`,
          {
            contentType: 'application/json',
            // A header rather than Google's `?key=`: a URL ends up in proxies' logs.
            headers: { 'x-goog-api-key': provider.secretKey },
            text: JSON.stringify({ event: { token, siteKey: provider.siteKey, expectedAction: 'interaction' } }),
          },
          limits('the reCAPTCHA Enterprise URL (CAPTCHA_VERIFY_URL_RECAPTCHA)'),
        ),
      assessmentAnswer,
    );
    if ('verdict' in asked) {
      return asked.verdict;
    }
    const { tokenProperties, riskAnalysis } = asked.answer;
    if (!tokenProperties.valid) {
      return rejected(`invalid token (${tokenProperties.invalidReason ?? 'no reason given'})`);
    }
    // A ticked box is the person's answer: its score does not count (Logto's checkbox mode).
    return provider.mode === 'checkbox' || riskAnalysis.score >= minimumScore
      ? { passed: true }
      : rejected(`score ${riskAnalysis.score} below ${minimumScore}`);
  };
}
