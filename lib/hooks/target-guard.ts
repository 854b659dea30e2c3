import { RequestError } from '../http/errors.ts';
import { refusalAhead } from '../http/outbound/outbound-guard.ts';

/**
 * A webhook target's URL: http(s), and, unless private targets are allowed, a public address
 * (`http/outbound/outbound-guard.ts`). Checked when a hook is saved and again when it is sent.
 */

/** How the guard names a webhook target in its refusals (the attempt's error, the 400's reason). */
export const hookTargetSubject = 'The hook target';

/** The URL, if it is an absolute http(s) URL; else 400 hook.invalid_url. */
export function parseHookUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RequestError('hook.invalid_url', { reason: 'The hook URL is not a valid URL.' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RequestError('hook.invalid_url', { reason: 'The hook URL must use http or https.' });
  }
  return url;
}

/**
 * At save (and test) time: the URL's scheme, and, unless private targets are allowed, every address
 * its host resolves to. A name that does not resolve now is accepted: it is checked again at each send.
 */
export async function assertHookTarget(value: string, allowPrivate: boolean): Promise<URL> {
  const url = parseHookUrl(value);
  const refused = allowPrivate ? undefined : await refusalAhead(url, hookTargetSubject);
  if (refused) {
    throw new RequestError('hook.invalid_url', { reason: `${refused}.` });
  }
  return url;
}
