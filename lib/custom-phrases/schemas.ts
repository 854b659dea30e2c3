import { z } from 'zod';

import { boundedRecord } from '../http/limits.ts';
import type { Translation } from '../shared/phrases/index.ts';

/** A BCP 47 language tag as Logto keys custom phrases by (`en`, `de`, `pt-BR`), at most 16 characters. */
export const phraseLanguageTagSchema = z
  .string()
  .max(16)
  .regex(/^[a-zA-Z]{2,8}(-[a-zA-Z0-9]{1,8})*$/, 'must be a language tag, such as en, fr or pt-BR')
  .meta({ examples: ['en', 'pt-BR'] });

/** A phrase is one line or a short paragraph. */
const phrase = z.string().max(2000);
const key = z.string().min(1).max(64);

/**
 * Logto's `TranslationObject`, as deep as the catalogue nests (four levels: `apiErrors.session.mfa.x`).
 * Spelt out rather than recursive, so that the OpenAPI document describes it without a `$ref` cycle.
 */
const nested = (depth: number): z.ZodType<Translation> =>
  boundedRecord(key, depth === 1 ? phrase : z.union([phrase, nested(depth - 1)]), maxKeysPerLevel);
/** The catalogue's largest group has some 60 keys; 256 Ki characters in all, as the column holds. */
const maxKeysPerLevel = 500;
export const translationSchema = nested(4).refine(
  (translation) => JSON.stringify(translation).length <= 256 * 1024,
  'must be at most 262144 characters as JSON',
);

/** Logto's `CustomPhrase`. */
export const customPhraseSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  languageTag: z.string(),
  translation: translationSchema,
});
export type CustomPhrase = z.output<typeof customPhraseSchema>;
