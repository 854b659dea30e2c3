import { languageFor } from '../custom-phrases/languages.ts';
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
    // The message's language is the only one asked for: no Accept-Language goes with a message.
    const [settings, { language, catalogue }] = await Promise.all([
      currentSignInExperience(db, cache),
      languageFor(db, cache, { uiLocales: locale }),
    ]);
    return { language, catalogue, logoUrl: settings.branding.logoUrl, primaryColor: settings.color.primaryColor };
  };
}

export type EmailLooks = ReturnType<typeof emailLooks>;
