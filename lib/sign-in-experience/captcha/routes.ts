import { z } from 'zod';

import { isMaskedSecret } from '../../connectors/secrets.ts';
import type { Api } from '../../http/api/route.ts';
import type { ServiceContext } from '../../http/context.ts';
import { RequestError } from '../../http/errors.ts';
import { saveSignInExperience, signInExperienceForUpdate } from '../sign-in-experience.ts';
import {
  captchaProviderForUpdate,
  currentCaptchaProvider,
  deleteCaptchaProviders,
  saveCaptchaProvider,
} from './captcha-queries.ts';
import {
  type CaptchaConfig,
  captchaConfigSchema,
  type CaptchaProvider,
  captchaProviderResponse,
  toCaptchaProviderAnswer,
} from './captcha-schemas.ts';

const tag = 'Captcha provider';

/**
 * A secret key given back as its mask (a form saved unchanged) keeps the stored one, for the same
 * kind of provider only: another provider's secret would not be this one's.
 */
function withSecretKey(config: CaptchaConfig, existing: CaptchaProvider | undefined): CaptchaConfig {
  if (!isMaskedSecret(config.secretKey)) {
    return config;
  }
  if (!existing || existing.config.type !== config.type) {
    throw new RequestError('guard.invalid_input', {
      reason: `config.secretKey is a mask, and there is no stored ${config.type} secret key it could stand for: send the secret key itself.`,
    });
  }
  return { ...config, secretKey: existing.config.secretKey };
}

/** Logto's `/api/captcha-provider`: the one captcha provider, read, replaced and deleted. */
export function captchaProviderRoutes(api: Api, { db, cache }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/captcha-provider',
      summary: 'Get the captcha provider (its secret key masked); 404 when none is set up',
      tag,
      response: captchaProviderResponse,
      errors: [404],
    },
    async () => {
      const provider = await currentCaptchaProvider(db, cache);
      if (!provider) {
        throw new RequestError('entity.not_found', { reason: 'No captcha provider is set up.' });
      }
      return toCaptchaProviderAnswer(provider);
    },
  );

  api.add(
    {
      method: 'put',
      path: '/captcha-provider',
      summary: 'Set up the captcha provider, or replace its configuration (a masked secret key keeps the stored one)',
      tag,
      body: z.strictObject({ config: captchaConfigSchema }),
      response: captchaProviderResponse,
    },
    async ({ body }, _ctx, trx) => {
      const existing = await captchaProviderForUpdate(trx);
      return toCaptchaProviderAnswer(await saveCaptchaProvider(trx, existing, withSecretKey(body.config, existing)));
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/captcha-provider',
      summary: "Delete the captcha provider, and turn the sign-in experience's captcha policy off",
      tag,
    },
    async (_input, _ctx, trx) => {
      await deleteCaptchaProviders(trx);
      // Logto's rule: a policy left on without a provider would refuse every sign-in.
      const settings = await signInExperienceForUpdate(trx);
      await saveSignInExperience(trx, { ...settings, captchaPolicy: { enabled: false } });
    },
  );
}
