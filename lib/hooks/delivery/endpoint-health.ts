import type { Logger } from '../../http/logger.ts';
import type { MessageConnector } from '../../messages/index.ts';

/**
 * Endpoint health: a hook whose every attempt failed for `HOOKS_DISABLE_AFTER` seconds is disabled
 * (as Svix does after five days), and so is one that answered 410 Gone. The run of failures starts at
 * the first failed attempt after a successful one (`hook_dispatch.failing_since`); a success, or
 * enabling the hook again, ends it.
 */

export const disabledReasons = {
  gone: 'The endpoint answered 410 Gone.',
  failing: (seconds: number) => `Every delivery attempt failed for ${seconds} seconds.`,
} as const;

/** The key of the notice in the audit log and the logs. */
export const hookDisabledKey = 'Hook.Disabled';

export type AttemptHealth = { at: number; succeeded: boolean };

/** Where a hook's run of failures stands after `attempts` (in any order), starting from `failingSince`. */
export function failingSinceAfter(failingSince: number | null, attempts: AttemptHealth[]): number | null {
  let since = failingSince;
  for (const { at, succeeded } of [...attempts].sort((a, b) => a.at - b.at)) {
    since = succeeded ? null : (since ?? at);
  }
  return since;
}

/** Whether a run of failures started at `failingSince` has lasted long enough at `now` to disable. */
export const failedTooLong = (failingSince: number | null, now: number, disableAfterSeconds: number) =>
  failingSince !== null && now - failingSince >= disableAfterSeconds * 1000;

export type DisabledHook = { hookId: string; reason: string };

/**
 * Who hears of a disabled hook besides the logs: the audit log (lib/audit's AuditLog, which reads
 * hook names, so it is handed in rather than imported), and the hook's `notifyEmail` by email.
 */
export type HealthNotices = {
  audit?: {
    record(key: string, payload: { result: 'Success'; params: Record<string, unknown> }, targets: string[]): void;
  };
  email?: MessageConnector;
};

/**
 * `Hook.Disabled`: a log line and an audit entry (ids and the reason, never the URL: its path or
 * query may carry a token), and an email to the hook's `notifyEmail` when it has one and email can
 * be sent.
 */
export async function announceDisabled(
  { logger, notices }: { logger: Logger; notices: HealthNotices },
  { hookId, reason, hookName, notifyEmail }: DisabledHook & { hookName: string; notifyEmail: string | null },
): Promise<void> {
  logger.warn({ key: hookDisabledKey, hookId, reason }, 'webhook disabled');
  notices.audit?.record(hookDisabledKey, { result: 'Success', params: { hookId, reason } }, [hookId]);
  if (notifyEmail && notices.email) {
    try {
      await notices.email.send({ to: notifyEmail, type: 'email', purpose: 'HookDisabled', hookId, hookName, reason });
    } catch (error) {
      logger.error({ err: error, key: hookDisabledKey, hookId }, 'webhook disabled: the notice email was not sent');
    }
  }
}
