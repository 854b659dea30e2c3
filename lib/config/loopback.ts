import ipaddr from 'ipaddr.js';

/**
 * Whether a host name or IP address is this machine: `localhost`, 127.0.0.0/8, ::1, or an IPv4
 * loopback address mapped into IPv6 (`::ffff:127.0.0.1`, as a dual-stack socket reports it).
 */
export function isLoopback(hostOrAddress: string): boolean {
  const host = hostOrAddress.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost') {
    return true;
  }
  return ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback';
}
