import type { EmailLook } from '../../lib/messages/built-in-emails.ts';
import { catalogueFor } from '../../lib/shared/phrases/index.ts';

/** The built-in emails' look on a fresh install, in `language`: no logo, the default primary colour. */
export const builtInLook = (language = 'en'): EmailLook => ({
  language,
  catalogue: catalogueFor(language),
  primaryColor: '#1d4ed8',
});
