import { z } from 'zod';

import { maskSecret } from '../../connectors/secrets.ts';
import { tenantId } from '../../shared/tenant.ts';

/*
 * Logto's captcha provider (`/api/captcha-provider`): one at most, Cloudflare Turnstile or Google
 * reCAPTCHA Enterprise, in Logto's `CaptchaConfig` shapes. It belongs with the sign-in experience,
 * whose `captchaPolicy` turns it on.
 */

const key = z.string().min(1).max(512);

export const captchaConfigSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('Turnstile'), siteKey: key, secretKey: key }),
  z.strictObject({
    type: z.literal('RecaptchaEnterprise'),
    siteKey: key,
    /** An API key of the Google Cloud project. */
    secretKey: key,
    // A path segment of the assessment's URL: the characters of Google's project ids (a domain-scoped one has `.` and `:`).
    projectId: z
      .string()
      .max(128)
      .regex(/^[\w.:-]{1,128}$/, 'a Google Cloud project id: letters, digits and - _ . :'),
    /** Where the page loads reCAPTCHA's script from (`recaptcha.net` where google.com is blocked). */
    domain: z
      .string()
      .max(253)
      .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'a host name, such as recaptcha.net')
      .optional(),
    /** `checkbox`: the person ticks a box, and a valid token passes whatever its score. */
    mode: z.enum(['invisible', 'checkbox']).optional(),
  }),
]);
export type CaptchaConfig = z.output<typeof captchaConfigSchema>;

export type CaptchaProvider = { id: string; config: CaptchaConfig; createdAt: number; updatedAt: number };

/** Logto's answer, its secret key masked as connector secrets are (docs/decisions.md, "Captcha"). */
export const captchaProviderResponse = z.object({
  tenantId: z.string(),
  id: z.string(),
  config: captchaConfigSchema,
  createdAt: z.number(),
  updatedAt: z.number(),
});

export const toCaptchaProviderAnswer = (provider: CaptchaProvider): z.input<typeof captchaProviderResponse> => ({
  tenantId,
  ...provider,
  config: { ...provider.config, secretKey: maskSecret(provider.config.secretKey) },
});

/** Logto's `captchaConfig` of the public settings: what the sign-in page needs to show the widget, never the secret key. */
export const publicCaptchaConfigSchema = z.object({
  type: z.enum(['Turnstile', 'RecaptchaEnterprise']),
  siteKey: z.string(),
  domain: z.string().optional(),
  mode: z.enum(['invisible', 'checkbox']).optional(),
});
export type PublicCaptchaConfig = z.output<typeof publicCaptchaConfigSchema>;

export function publicCaptchaConfig({ config }: CaptchaProvider): PublicCaptchaConfig {
  return {
    type: config.type,
    siteKey: config.siteKey,
    ...(config.type === 'RecaptchaEnterprise' && config.domain && { domain: config.domain }),
    ...(config.type === 'RecaptchaEnterprise' && config.mode && { mode: config.mode }),
  };
}

/**
 * The origins the sign-in page loads the widget's script and frame from, which its CSP then allows
 * (Cloudflare's and Google's documented ones; reCAPTCHA from `domain` where one is set).
 */
export function captchaWidgetOrigins(config: PublicCaptchaConfig): { scripts: string[]; frames: string[] } {
  if (config.type === 'Turnstile') {
    return { scripts: ['https://challenges.cloudflare.com'], frames: ['https://challenges.cloudflare.com'] };
  }
  const host = `https://${config.domain ?? 'www.google.com'}/recaptcha/`;
  return { scripts: [host, 'https://www.gstatic.com/recaptcha/', 'https://www.gstatic.cn/recaptcha/'], frames: [host] };
}
