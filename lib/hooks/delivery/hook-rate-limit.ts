/**
 * A hook's `rateLimitPerSecond`, as the generic cell rate algorithm (a token bucket holding one
 * second's worth): its one stored value is the theoretical arrival time of the next delivery
 * (`hook_dispatch.rate_next_at`), read and moved on under the claim's lock. Over any window of W
 * seconds a hook is sent at most `rate × (W + 1)` deliveries, whichever instances send them.
 */

/** A full bucket: after a quiet second, this many may go at once. */
const burstMs = 1000;

const intervalMs = (rate: number) => 1000 / rate;

/** How many deliveries may be claimed at `now`. */
export function rateAllowance(rate: number, nextAt: number | null, now: number): number {
  const from = Math.max(nextAt ?? now, now);
  return Math.max(0, Math.floor(((now + burstMs - from) * rate) / 1000));
}

/** The stored time after `count` more were claimed at `now` (rounded up: never more than the rate). */
export function rateNextAfter(rate: number, nextAt: number | null, now: number, count: number): number {
  return Math.ceil(Math.max(nextAt ?? now, now) + count * intervalMs(rate));
}

/** When the next one may be claimed. */
export function nextAllowedAt(rate: number, nextAt: number | null, now: number): number {
  return Math.max(now, Math.ceil(Math.max(nextAt ?? now, now) - burstMs + intervalMs(rate)));
}
