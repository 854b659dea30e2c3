type Origins = { images?: string[]; formTargets?: string[]; scripts?: string[]; frames?: string[] };

/**
 * The Content-Security-Policy of the service's own pages, given the origins they load images from and
 * post forms to, and the scripts and frames of another origin they load (a captcha widget's).
 */
function contentSecurityPolicy({ images = [], formTargets = [], scripts = [], frames = [] }: Origins): string {
  return [
    "default-src 'self'",
    ...(scripts.length > 0 ? [["script-src 'self'", ...scripts].join(' ')] : []),
    ...(frames.length > 0 ? [['frame-src', ...frames].join(' ')] : []),
    ["img-src 'self' data:", ...images].join(' '),
    "base-uri 'none'",
    "object-src 'none'",
    ["form-action 'self'", ...formTargets].join(' '),
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The headers of the service's own HTML pages (the sign-in pages, the provider's pages, the
 * console): nothing inline, nothing from elsewhere but data: images (QR codes, charts) and images
 * from `images`, the origins of the logos and icons the settings name (operator-set URLs: an
 * `http:` logo in development shows, and no other origin can be loaded from); forms post to the
 * service and to `formTargets`. The sign-in pages add the captcha widget's `scripts` and `frames`
 * while the captcha policy is on. No framing of these pages, no caching.
 */
export function pageHeaders(origins: Origins = {}) {
  return {
    'Content-Security-Policy': contentSecurityPolicy(origins),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  };
}
