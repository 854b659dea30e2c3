import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { orNotFound, RequestError } from '../http/errors.ts';
import { unknownKeys } from '../shared/phrases/index.ts';
import { readSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { bumpCacheVersion } from '../storage/shared-cache.ts';
import { deleteCustomPhrase, findCustomPhrase, listCustomPhrases, upsertCustomPhrase } from './queries.ts';
import { customPhraseSchema, phraseLanguageTagSchema, translationSchema } from './schemas.ts';

const tag = 'Custom phrases';
const params = z.object({ languageTag: phraseLanguageTagSchema });

/**
 * Logto's custom phrases: per language, texts of the hosted pages and built-in emails in place of
 * the catalogue's (keys as in lib/shared/phrases/en.ts, nested). Phrases for a language the service
 * does not ship add that language, over English. No webhook event: Logto's catalogue has none.
 */
export function customPhraseRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/custom-phrases',
      summary: 'List the custom phrases of every language',
      tag,
      response: z.array(customPhraseSchema),
    },
    async () => listCustomPhrases(db),
  );

  api.add(
    {
      method: 'get',
      path: '/custom-phrases/:languageTag',
      summary: 'Get the custom phrases of a language',
      tag,
      params,
      response: customPhraseSchema,
      errors: [404],
    },
    async ({ params: { languageTag } }) =>
      orNotFound(await findCustomPhrase(db, languageTag), 'custom phrases', languageTag),
  );

  api.add(
    {
      method: 'put',
      path: '/custom-phrases/:languageTag',
      summary: 'Create or replace the custom phrases of a language',
      tag,
      params,
      body: translationSchema,
      response: customPhraseSchema,
      status: 201,
      errors: [422],
    },
    async ({ params: { languageTag }, body }, _ctx, trx) => {
      const unknown = unknownKeys(body);
      if (unknown.length > 0) {
        throw new RequestError('localization.invalid_translation_structure', {
          details: unknown.slice(0, 20).map((key) => ({ path: key, message: 'is not a phrase of the catalogue' })),
        });
      }
      const saved = await upsertCustomPhrase(trx, languageTag, body);
      await bumpCacheVersion(trx, 'settings');
      return saved;
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/custom-phrases/:languageTag',
      summary: 'Delete the custom phrases of a language',
      tag,
      params,
      errors: [404, 409],
    },
    async ({ params: { languageTag } }, _ctx, trx) => {
      const { languageInfo } = await readSignInExperience(trx);
      orNotFound(await findCustomPhrase(trx, languageTag), 'custom phrases', languageTag);
      // As Logto: the sign-in experience's fallback language keeps its phrases (change it first).
      if (languageInfo.fallbackLanguage === languageTag) {
        throw new RequestError('localization.cannot_delete_default_language', { languageTag });
      }
      await deleteCustomPhrase(trx, languageTag);
      await bumpCacheVersion(trx, 'settings');
    },
  );
}
