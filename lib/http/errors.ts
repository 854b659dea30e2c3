import { type ErrorCode, errorCodes } from './error-codes.ts';

type Catalogue = typeof errorCodes;
type MessageOf<C extends ErrorCode> = Catalogue[C]['message'];
type ParamsOf<C extends ErrorCode> = MessageOf<C> extends (params: infer P) => string ? P : never;

type Extra<C extends ErrorCode> = {
  data?: unknown;
  details?: unknown;
  /** What went wrong underneath, for the operator's log line; never rendered. */
  cause?: unknown;
} & (Catalogue[C] extends { alsoStatus: infer S } ? { status?: S } : { status?: never });

/** After the code: the message's params where its message takes them, then the extras. */
type Args<C extends ErrorCode> =
  MessageOf<C> extends string
    ? [extra?: Extra<C>]
    : undefined extends ParamsOf<C>
      ? [params?: ParamsOf<C>, extra?: Extra<C>]
      : [params: ParamsOf<C>, extra?: Extra<C>];

type AnyEntry = {
  status: number;
  message: string | ((params: unknown) => string);
  data?: (params: unknown) => unknown;
  details?: (params: unknown) => unknown;
};

/** Extra<C> for any code (a status is only given for codes that allow one). */
type AnyExtra = { data?: unknown; details?: unknown; cause?: unknown; status?: number };

/**
 * The one error type of the management, experience and account APIs, built from a code of the
 * catalogue (error-codes.ts), which gives its status and message:
 * `new RequestError('entity.not_exists_with_id', { entity: 'hook', id })`. Its code and message are
 * written for the client; any other error is rendered as `unknown` (error-handler.ts).
 */
export class RequestError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly data?: unknown;
  readonly details?: unknown;

  constructor(code: C, ...args: Args<C>) {
    const entry = errorCodes[code] as AnyEntry;
    const takesParams = typeof entry.message === 'function';
    const params: unknown = takesParams ? args[0] : undefined;
    const extra = (takesParams ? args[1] : args[0]) as AnyExtra | undefined;
    const message = typeof entry.message === 'function' ? entry.message(params) : entry.message;
    super(message, extra?.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'RequestError';
    this.code = code;
    this.status = extra?.status ?? entry.status;
    this.data = extra?.data ?? entry.data?.(params);
    this.details = extra?.details ?? entry.details?.(params);
  }
}

/** `value`, or a 404 naming what was not found. */
export function orNotFound<T>(value: T | undefined, entity: string, id: string): T {
  if (value === undefined) {
    throw new RequestError('entity.not_exists_with_id', { entity, id });
  }
  return value;
}
