/** The Content-Security-Policy of the service's own pages, given the origins they load images from and post forms to. */
function contentSecurityPolicy(images: string[], formTargets: string[]): string {
  return [
    "default-src 'self'",
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
 * service and to `formTargets`. No framing, no caching.
 */
export function pageHeaders({ images = [], formTargets = [] }: { images?: string[]; formTargets?: string[] } = {}) {
  return {
    'Content-Security-Policy': contentSecurityPolicy(images, formTargets),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  };
}
