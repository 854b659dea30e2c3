/**
 * What a delivery attempt's answer means: delivered, try again later (network errors, 408, 429,
 * 5xx, while the schedule lasts), or give up (other statuses; 410 also disables the hook).
 */
export type AttemptAnswer = {
  /** Absent when no response arrived. */
  statusCode?: number;
  /** Retry-After, already turned into milliseconds from now. */
  retryAfterMs?: number;
  /** The SSRF guard refused the target: never retried. */
  refused?: boolean;
};

export type Outcome =
  { status: 'succeeded' } | { status: 'pending'; waitMs: number } | { status: 'failed'; disableHook: boolean };

/** The longest Retry-After honoured (a day, the schedule's own longest wait by default). */
export const maxRetryAfterMs = 24 * 60 * 60 * 1000;
/** Each wait is the schedule's value plus up to this share of it. */
export const jitterShare = 0.2;

export const isRetryableStatus = (statusCode: number | undefined) =>
  statusCode === undefined || statusCode === 408 || statusCode === 429 || statusCode >= 500;

/**
 * `attempt` counts from 1. After attempt n, the wait is schedule[n-1] seconds plus up to 20%;
 * a longer Retry-After replaces it; past the schedule's end the delivery has failed.
 */
export function decideOutcome(
  answer: AttemptAnswer,
  attempt: number,
  schedule: readonly number[],
  random = Math.random,
): Outcome {
  const { statusCode } = answer;
  if (answer.refused) {
    return { status: 'failed', disableHook: false };
  }
  if (statusCode !== undefined && statusCode >= 200 && statusCode < 300) {
    return { status: 'succeeded' };
  }
  if (statusCode === 410) {
    return { status: 'failed', disableHook: true };
  }
  if (!isRetryableStatus(statusCode) || attempt > schedule.length) {
    return { status: 'failed', disableHook: false };
  }
  const scheduled = schedule[attempt - 1] * 1000 * (1 + random() * jitterShare);
  const retryAfter = Math.min(answer.retryAfterMs ?? 0, maxRetryAfterMs);
  return { status: 'pending', waitMs: Math.round(Math.max(scheduled, retryAfter)) };
}

/** `Retry-After: 120` or an HTTP date, as milliseconds from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) {
    return undefined;
  }
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    return Number(trimmed) * 1000;
  }
  // An HTTP date names its day and month: a bare "-5" or "2025" is not one.
  const date = /[a-z]{3}/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
