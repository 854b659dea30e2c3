import type { Context } from 'koa';

import type { Config } from '../config/env.ts';
import { isLoopback } from '../config/loopback.ts';

/** Headers a proxy adds to name the client it forwards for. */
const forwardingHeaders = ['x-forwarded-for', 'forwarded', 'x-real-ip'];

/**
 * Whether a request comes from a browser on this machine. The connection must come from loopback;
 * a request naming a client through a forwarding header comes from that client, not from the proxy
 * on this machine, so it counts as local only when TRUST_PROXY is on and every address of its
 * `X-Forwarded-For` chain is loopback (a client can prepend addresses, not remove the proxy's).
 * `Forwarded` and `X-Real-IP` are not read, so they make a request not local.
 *
 * A proxy on this machine need not add any such header. In production a request naming the public
 * ENDPOINT's host (the Host the proxy passes on, as Node received it) came through it, since a browser
 * on this machine reaches the service by a loopback name; so it is not local either.
 */
export function isLocalRequest(ctx: Context, config: Pick<Config, 'trustProxy' | 'production' | 'endpoint'>): boolean {
  const peer = ctx.req.socket.remoteAddress;
  if (!peer || !isLoopback(peer) || (config.production && namesPublicHost(ctx, config.endpoint))) {
    return false;
  }
  const forwarded = forwardingHeaders.filter((name) => ctx.get(name) !== '');
  if (forwarded.length === 0) {
    return true;
  }
  if (!config.trustProxy || forwarded.some((name) => name !== 'x-forwarded-for')) {
    return false;
  }
  return ctx
    .get('x-forwarded-for')
    .split(',')
    .every((address) => isLoopback(address.trim()));
}

/** Whether the request's own Host header names the public endpoint's host (when that is not loopback). */
function namesPublicHost(ctx: Context, endpoint: string): boolean {
  const publicHost = new URL(endpoint).hostname;
  const host = ctx.req.headers.host ?? '';
  const named = URL.canParse(`http://${host}`) ? new URL(`http://${host}`).hostname : host;
  return !isLoopback(publicHost) && named === publicHost;
}
