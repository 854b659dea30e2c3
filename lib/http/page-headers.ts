/**
 * The headers of the service's own HTML pages (the sign-in pages, the console): nothing inline,
 * nothing from elsewhere but data: images (QR codes, charts), no framing, no caching.
 */
export const pageHeaders = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/**
 * The hosted sign-in pages' headers: as above, but images may also come over HTTPS from anywhere,
 * for the logos the sign-in experience and applications name (they are operator-set URLs).
 */
export const signInPageHeaders = {
  ...pageHeaders,
  'Content-Security-Policy': pageHeaders['Content-Security-Policy'].replace(
    "img-src 'self' data:",
    "img-src 'self' data: https:",
  ),
};
