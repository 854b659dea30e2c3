import { lookup, type LookupAddress, type LookupOneOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

import ipaddr from 'ipaddr.js';

import { RequestError } from '../http/errors.ts';

/**
 * SSRF guard for webhook targets. A URL must be http(s). Unless private targets are allowed, its
 * host must be, and resolve only to, public unicast addresses: not loopback, private, link-local,
 * unique-local, CGNAT, multicast, unspecified, reserved or documentation ranges, nor IPv6 forms that
 * embed an IPv4 address (mapped, translated, NAT64, 6to4, Teredo). Checked when a hook is saved and
 * again when it is sent, where the check happens inside the connection's own DNS lookup: the address
 * checked is the address connected to, so a name cannot be rebound between the two.
 */

/** A delivery refused by the guard: not retried. */
export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError';
  readonly code = 'ERR_HOOK_TARGET_REFUSED';
}

/** Whether an IP address (v4 or v6 text) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) {
    return false;
  }
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    return parsed.range() === 'unicast';
  }
  const ipv6 = parsed as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) {
    return isPublicAddress(ipv6.toIPv4Address().toString());
  }
  // ::/96 holds the deprecated IPv4-compatible forms (::127.0.0.1) that ipaddr.js calls unicast.
  if (ipv6.parts.slice(0, 6).every((part) => part === 0)) {
    return false;
  }
  return ipv6.range() === 'unicast';
}

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

/** `[::1]` → `::1`: WHATWG URL keeps the brackets of an IPv6 host. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

const refusal = (host: string, address: string) =>
  `The hook target ${host === address ? `${host} is` : `${host} resolves to ${address},`} a private or reserved address (HOOKS_ALLOW_PRIVATE_TARGETS is off).`;

const saveTimeLookupMs = 5000;

/**
 * At save (and test) time: the URL's scheme, and, unless private targets are allowed, every address
 * its host resolves to. A name that does not resolve now is accepted: it is checked again at each send.
 */
export async function assertHookTarget(value: string, allowPrivate: boolean): Promise<URL> {
  const url = parseHookUrl(value);
  if (allowPrivate) {
    return url;
  }
  const host = bareHost(url);
  if (isIP(host)) {
    if (!isPublicAddress(host)) {
      throw new RequestError('hook.invalid_url', { reason: refusal(host, host) });
    }
    return url;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), saveTimeLookupMs);
    lookup(host, { all: true, verbatim: true }, (error, found) => {
      clearTimeout(timer);
      resolve(error ? [] : found);
    });
  });
  const refused = addresses.find(({ address }) => !isPublicAddress(address));
  if (refused) {
    throw new RequestError('hook.invalid_url', { reason: refusal(host, refused.address) });
  }
  return url;
}

/**
 * At send time, for a host given as an IP address (the socket connects to it without a lookup).
 * Throws TargetRefusedError.
 */
export function assertLiteralTarget(url: URL): void {
  const host = bareHost(url);
  if (isIP(host) && !isPublicAddress(host)) {
    throw new TargetRefusedError(refusal(host, host));
  }
}

/**
 * A DNS lookup for the socket that refuses names resolving to any non-public address, and hands the
 * checked addresses themselves to the connection (the request's `lookup`).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  const wantsAll = options.all === true;
  lookup(hostname, { ...(options as LookupOneOptions), all: true }, (error, addresses) => {
    if (error) {
      callback(error, wantsAll ? [] : '', 0);
      return;
    }
    const refused = addresses.find(({ address }) => !isPublicAddress(address));
    if (refused) {
      callback(
        Object.assign(new TargetRefusedError(refusal(hostname, refused.address)), { hostname }),
        wantsAll ? [] : '',
        0,
      );
      return;
    }
    if (wantsAll) {
      callback(null, addresses);
      return;
    }
    const [first] = addresses;
    callback(null, first.address, first.family);
  });
};
