import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The one way a test waits for something the service does in its own time (a delivery, a log line,
 * a restart): polls `condition` every 50 ms until it returns a truthy value, and returns that value.
 * After `timeoutMs` it fails naming `what` it waited for (a function is asked at that moment, so it
 * can say what it saw instead). A condition that throws fails the wait at once: one that may throw
 * before it holds (a server not listening yet) catches that itself.
 */
export async function eventually<T>(
  condition: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs: number,
  what: string | (() => string),
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs / 1000} s: ${typeof what === 'string' ? what : what()}`);
    }
    await sleep(50);
  }
}
