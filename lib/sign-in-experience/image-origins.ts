import type { SignInExperience } from './schemas.ts';

/**
 * An image URL's origin as a CSP source (`https://cdn.example.com`, `http://localhost:8080`), for
 * http and https URLs; undefined for anything else. Only what a host may be is let through: the
 * origin goes into a header, where a `;` or a space would start another directive.
 */
export function imageOriginOf(url: string | null | undefined): string | undefined {
  if (!url || !URL.canParse(url)) {
    return undefined;
  }
  const { protocol, origin } = new URL(url);
  return (protocol === 'https:' || protocol === 'http:') &&
    /^https?:\/\/[\w.-]+(:\d+)?$|^https?:\/\/\[[\d:a-f.]+\](:\d+)?$/i.test(origin)
    ? origin
    : undefined;
}

/** The origins of images the pages may load, each once: `urls`' (logos, icons), the others left out. */
export function imageOrigins(urls: Array<string | null | undefined>): string[] {
  return [...new Set(urls.map(imageOriginOf).filter((origin) => origin !== undefined))];
}

/** Where the sign-in experience's logos and favicons are: every hosted page may show them. */
export const brandingImageOrigins = ({ branding }: Pick<SignInExperience, 'branding'>): string[] =>
  imageOrigins([branding.logoUrl, branding.darkLogoUrl, branding.favicon, branding.darkFavicon]);
