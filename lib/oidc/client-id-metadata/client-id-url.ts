/** The longest client id URL: what the audit log and the token denylist hold (migration 0027). */
export const maxClientIdUrlLength = 255;

/** Why a URL may not be a client id (draft-ietf-oauth-client-id-metadata-document §3), or the URL. */
export function parseClientIdUrl(clientId: string): URL | string {
  if (clientId.length > maxClientIdUrlLength) {
    return `a client_id URL may have at most ${maxClientIdUrlLength} characters`;
  }
  const url = URL.canParse(clientId) ? new URL(clientId) : undefined;
  if (!url) {
    return 'the client_id is not a valid URL';
  }
  if (url.protocol !== 'https:') {
    return 'a client_id URL must use https';
  }
  if (url.username !== '' || url.password !== '') {
    return 'a client_id URL must not hold a username or password';
  }
  if (clientId.includes('#')) {
    return 'a client_id URL must not have a fragment';
  }
  const rawPath = clientId
    .slice(url.protocol.length + 2)
    .replace(/^[^/?]*/, '')
    .split('?')[0];
  if (rawPath.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) {
    return 'a client_id URL must not have . or .. path segments';
  }
  if (url.pathname === '/') {
    return 'a client_id URL must have a path (the document is at https://host/some/path)';
  }
  // The document must name exactly this string, and the person is shown its host: no two spellings.
  if (url.href !== clientId) {
    return `a client_id URL must be written as ${url.href}`;
  }
  return url;
}

/** Whether a host is on the allow-list: `host` exactly, `*.suffix` for its subdomains, `*` for any. */
export const hostAllowed = (hostname: string, hosts: string[]): boolean =>
  hosts.some((pattern) =>
    pattern === '*' ? true : pattern.startsWith('*.') ? hostname.endsWith(pattern.slice(1)) : hostname === pattern,
  );
