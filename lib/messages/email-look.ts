import { cachedCustomPhrases, chooseLanguage, phrasesIn } from '../custom-phrases/languages.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import type { EmailLook } from './built-in-emails.ts';

/**
 * The built-in emails' language and branding: the message's language where we have it (as the
 * hosted pages choose, languages.ts), else the sign-in experience's fallback; its logo and colour.
 */
export function emailLooks(db: Queryable, cache: SharedCache) {
  return async (locale: string | undefined): Promise<EmailLook> => {
    const [settings, custom] = await Promise.all([currentSignInExperience(db, cache), cachedCustomPhrases(db, cache)]);
    // The message's language is the only one asked for: a browser's Accept-Language is not the mail reader's.
    const language = chooseLanguage(
      { uiLocales: locale },
      { languageInfo: { ...settings.languageInfo, autoDetect: false } },
      custom,
    );
    return {
      language,
      catalogue: phrasesIn(language, custom),
      logoUrl: settings.branding.logoUrl,
      primaryColor: settings.color.primaryColor,
    };
  };
}

export type EmailLooks = ReturnType<typeof emailLooks>;
