import { lookup, type LookupAddress, type LookupOneOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard for the service's outbound requests to URLs someone else named: webhook targets, an
 * outside issuer's jwksUri, a client's metadata document. Unless private targets are allowed, a
 * host must be, and resolve only to, public unicast addresses: not loopback, private, link-local,
 * unique-local, CGNAT, multicast, unspecified, reserved or documentation ranges, nor IPv6 forms that
 * embed an IPv4 address (mapped, translated, NAT64, 6to4, Teredo). At request time the check happens
 * inside the connection's own DNS lookup: the address checked is the address connected to, so a
 * name cannot be rebound between a check and the request.
 *
 * Each check takes the caller's subject ("The hook target", "the client's metadata document
 * address") so that a refusal names what was refused. One setting, `HOOKS_ALLOW_PRIVATE_TARGETS`,
 * governs all three (docs/decisions.md): its name predates the other two.
 */

/** A request refused by the guard: not retried. */
export class TargetRefusedError extends Error {
  override name = 'TargetRefusedError';
  // The code webhook delivery has always recognised a refusal by (lib/hooks/delivery/send.ts).
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

/** `[::1]` → `::1`: WHATWG URL keeps the brackets of an IPv6 host. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

const refusal = (subject: string, host: string, address: string) =>
  `${subject} ${host === address ? `${host} is` : `${host} resolves to ${address},`} a private or reserved address (HOOKS_ALLOW_PRIVATE_TARGETS is off)`;

const aheadLookupMs = 5000;

/**
 * Ahead of any request (a hook being saved): the refusal for the first of the host's addresses that
 * is not public, if any. A name that does not resolve now is not refused: it is checked at each request.
 */
export async function refusalAhead(url: URL, subject: string): Promise<string | undefined> {
  const host = bareHost(url);
  if (isIP(host)) {
    return isPublicAddress(host) ? undefined : refusal(subject, host, host);
  }
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), aheadLookupMs);
    lookup(host, { all: true, verbatim: true }, (error, found) => {
      clearTimeout(timer);
      resolve(error ? [] : found);
    });
  });
  const refused = addresses.find(({ address }) => !isPublicAddress(address));
  return refused && refusal(subject, host, refused.address);
}

/**
 * At request time, for a host given as an IP address (the socket connects to it without a lookup).
 * Throws TargetRefusedError.
 */
export function assertLiteralTarget(url: URL, subject: string): void {
  const host = bareHost(url);
  if (isIP(host) && !isPublicAddress(host)) {
    throw new TargetRefusedError(refusal(subject, host, host));
  }
}

/**
 * A DNS lookup for the socket (the request's `lookup`) that refuses names resolving to any
 * non-public address, and hands the checked addresses themselves to the connection.
 */
export function guardedLookup(subject: string): LookupFunction {
  return (hostname, options, callback) => {
    const wantsAll = options.all === true;
    lookup(hostname, { ...(options as LookupOneOptions), all: true }, (error, addresses) => {
      if (error) {
        callback(error, wantsAll ? [] : '', 0);
        return;
      }
      const refused = addresses.find(({ address }) => !isPublicAddress(address));
      if (refused) {
        callback(
          Object.assign(new TargetRefusedError(refusal(subject, hostname, refused.address)), { hostname }),
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
}
