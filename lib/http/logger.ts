import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import pretty from 'pino-pretty';

import type { Config } from '../config/env.ts';

export type { Logger } from 'pino';

/** Fields that hold credentials wherever a request, its body or an error is logged. */
const credentialFields = [
  'authorization',
  'cookie',
  'set-cookie',
  'password',
  'secret',
  'token',
  'clientSecret',
  'client_secret',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'setupToken',
];
/** Where a request's credentials would be in a log line; `code` (a verification or authorization code) too. */
const requestParts = ['headers', 'body', 'query', 'params', 'req.headers', 'req.body', 'req.query', 'res.headers'];
/** Other objects that may carry credentials (a connector's config, an error's data). */
const otherParts = ['config', 'data'];
/** A redaction path (pino's syntax): `parent.field`, or `parent["set-cookie"]` for names that need quotes. */
const path = (parent: string, field: string) =>
  /^\w+$/.test(field) ? [parent, field].filter(Boolean).join('.') : `${parent}["${field}"]`;

/**
 * Named paths only: pino compiles them into plain property checks, free on every request line,
 * where a `*` wildcard would cost more than the rest of the line. Outside request parts `code` is
 * an error code, which a log line needs.
 */
const redactedPaths = [
  ...['', ...otherParts].flatMap((parent) => credentialFields.map((field) => path(parent, field))),
  ...requestParts.flatMap((part) => [...credentialFields, 'code'].map((field) => path(part, field))),
];

type SerializedError = {
  type: string;
  message: string;
  stack?: string;
  code?: unknown;
  errno?: unknown;
  sqlState?: unknown;
  status?: unknown;
  cause?: SerializedError;
};

/**
 * Errors are logged by a fixed set of fields. Others are left out because they carry values:
 * mysql2's `sql` (the statement with its values), Node's `rawPacket` (the bytes of a malformed
 * request), knex's `bindings`, an HTTP client's request options. mysql2's message (`sqlMessage`)
 * quotes values too (`Duplicate entry 'x'`): it is replaced by the error code where it appears;
 * knex prefixes statements with placeholders (`compileSqlOnError: false`, lib/storage/database.ts).
 */
export function serializeError(error: unknown, depth = 0): SerializedError {
  if (!(error instanceof Error)) {
    return { type: typeof error, message: 'a thrown value that is not an Error' };
  }
  const fields = error as Error & Record<'code' | 'errno' | 'sqlState' | 'sqlMessage' | 'status', unknown>;
  const withoutValues = (text: string) =>
    typeof fields.sqlMessage === 'string' && fields.sqlMessage !== ''
      ? text.replaceAll(fields.sqlMessage, `[${String(fields.code)}]`)
      : text;
  return {
    type: error.name,
    message: withoutValues(error.message),
    stack: error.stack === undefined ? undefined : withoutValues(error.stack),
    code: fields.code,
    errno: fields.errno,
    sqlState: fields.sqlState,
    status: fields.status,
    cause: error.cause === undefined || depth >= 3 ? undefined : serializeError(error.cause, depth + 1),
  };
}

/** The fields of a request line (`requestLogger`). */
type RequestLine = { requestId: string; method: string; path: string; status: number; ms: number };

/**
 * In development a request line reads as an access log's: `GET /sign-in 200 4.2 ms`, on one line,
 * its fields folded into the message (pino-pretty would print each on a line of its own). JSON
 * lines keep them as fields, `msg: "request"`, for whatever reads them.
 */
const requestLineAsText: NonNullable<LoggerOptions['hooks']>['logMethod'] = function (this: Logger, args, method) {
  const [fields, message] = args as unknown[];
  if (message === 'request' && typeof fields === 'object' && fields !== null && 'method' in fields) {
    const { method: verb, path, status, ms } = fields as RequestLine;
    method.call(this, `${verb} ${path} ${status} ${ms} ms`);
    return;
  }
  method.apply(this, args);
};

/**
 * JSON lines in production, written in the background (a request never waits on stdout);
 * human-readable lines in development. `destination` replaces stdout (tests read what is logged).
 * Credentials are redacted and errors keep only what cannot hold a value.
 */
export function createLogger(config: Pick<Config, 'production' | 'logLevel'>, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    base: undefined,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    serializers: { err: serializeError },
  };
  if (config.production || config.logLevel === 'silent') {
    return pino(options, destination ?? pino.destination({ sync: false }));
  }
  // In this thread rather than a transport's worker: a development log is small, and the request
  // line's hook needs no serialising across threads.
  const stream = pretty({
    ignore: 'pid,hostname',
    translateTime: 'SYS:HH:MM:ss.l',
    ...(destination ? { destination, colorize: false } : {}),
  });
  return pino({ ...options, hooks: { logMethod: requestLineAsText } }, stream);
}

/**
 * Marks a request as one for a static file (a page's script, stylesheet or icon): its line goes at
 * debug, as probes' do, so that a page's load is one line at info, not one per file.
 */
export function logQuietly(ctx: Context): void {
  ctx.state.quietLog = true;
}

/** Where a secret shown once to the operator goes: stderr, apart from the log. */
export type NoticeStream = { write(text: string): unknown };

/**
 * A secret the operator must see once (generated credentials, the console's setup token), kept out
 * of the log: one JSON line in production (`level` warn, as the log's), a readable block otherwise.
 */
export function writeOneTimeSecret(
  out: NoticeStream,
  production: boolean,
  message: string,
  fields: Record<string, string>,
): void {
  if (production) {
    out.write(`${JSON.stringify({ level: 40, time: Date.now(), msg: message, ...fields })}\n`);
    return;
  }
  const labels = Object.keys(fields).map(
    (key) => `${key.replaceAll(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`)}:`,
  );
  const width = Math.max(...labels.map((label) => label.length)) + 1;
  const lines = Object.values(fields).map((value, index) => `  ${labels[index].padEnd(width)}${value}`);
  out.write(`\n${message}:\n${lines.join('\n')}\n\n`);
}

/** A path as logged: an interaction's uid (it resumes a sign-in, with its cookie) is left out. */
const loggedPath = (path: string) => path.replace(/^\/oidc\/auth\/[^/]+/, '/oidc/auth/:uid');

/**
 * One line per request. Only the path is logged: query strings may carry codes and tokens.
 * `quietPaths` (health probes, metrics scrapes: every few seconds) and static files (`logQuietly`)
 * are logged at debug.
 */
export function requestLogger(logger: Logger, quietPaths: ReadonlySet<string> = new Set()): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const requestId = ctx.get('x-request-id') || randomUUID();
    ctx.set('x-request-id', requestId);
    try {
      await next();
    } finally {
      logger[quietPaths.has(ctx.path) || ctx.state.quietLog === true ? 'debug' : 'info'](
        {
          requestId,
          method: ctx.method,
          path: loggedPath(ctx.path),
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    }
  };
}
