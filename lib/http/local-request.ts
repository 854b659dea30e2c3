import type { Context } from 'koa';

import { isLoopback } from '../config/loopback.ts';

/** Headers a proxy adds to name the client it forwards for. */
const forwardingHeaders = ['x-forwarded-for', 'forwarded', 'x-real-ip'];

/**
 * Whether a request comes from a browser on this machine. The connection must come from loopback;
 * a request naming a client through a forwarding header comes from that client, not from the proxy
 * on this machine, so it counts as local only when TRUST_PROXY is on and every address of its
 * `X-Forwarded-For` chain is loopback (a client can prepend addresses, not remove the proxy's).
 * `Forwarded` and `X-Real-IP` are not read, so they make a request not local.
 */
export function isLocalRequest(ctx: Context, trustProxy: boolean): boolean {
  const peer = ctx.req.socket.remoteAddress;
  if (!peer || !isLoopback(peer)) {
    return false;
  }
  const forwarded = forwardingHeaders.filter((name) => ctx.get(name) !== '');
  if (forwarded.length === 0) {
    return true;
  }
  if (!trustProxy || forwarded.some((name) => name !== 'x-forwarded-for')) {
    return false;
  }
  return ctx
    .get('x-forwarded-for')
    .split(',')
    .every((address) => isLoopback(address.trim()));
}
