import Router from '@koa/router';
import type { Knex } from 'knex';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';

import type { Effects } from '../../shared/event-data.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { holdsNul, nulRefused } from '../body.ts';
import { RequestError } from '../errors.ts';
import { flattenSearchParams } from './search.ts';
import { isSearchParameter } from './search.ts';
import type { ApiTag } from './tags.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** Whether a group's write routes run in a transaction the route opens, or open their own. */
type Writes = 'in-transaction' | 'own-transactions';
type Schema = z.ZodType;
type Out<S> = S extends Schema ? z.output<S> : undefined;

/** One management or experience route: its input schemas validate requests and generate the OpenAPI document. */
export type RouteSpec<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  R extends Schema | undefined,
> = {
  method: Method;
  path: string;
  summary: string;
  tag: ApiTag;
  params?: P;
  query?: Q;
  body?: B;
  /** Documents the success body; the handler's return type is checked against it. */
  response?: R;
  /** Success status: defaults to 200 with a response, 204 without. */
  status?: number;
  /** Error statuses this route answers with, besides 400/401/403. */
  errors?: number[];
  /**
   * A write route (POST, PUT, PATCH, DELETE) runs its handler in one transaction, given to it as its
   * third argument with the `Effects` it declares its events through, and runs it again after a deadlock. `false` gives it the pool instead, for a route that
   * waits on the network (no lock is held meanwhile) or must keep what it wrote when it fails: it
   * opens its own transactions (`withTransaction`) around its changes.
   */
  transaction?: false;
};

export type RouteInput<P, Q, B> = { params: Out<P>; query: Out<Q>; body: Out<B> };
/** Any route's input, as code serving every route sees it. */
export type AnyRouteInput = { params: unknown; query: unknown; body: unknown };

/** The pool, as a read (GET) handler gets it: it reads outside any transaction. */
export type Reader = Knex;
/** The pool, as a write handler without the route's transaction gets it: it opens its own (`withTransaction`). */
export type Pool = Knex;

/**
 * What a handler is given after its input and context: a read, the pool as a `Reader`; a write route,
 * its transaction and the `Effects` it declares its events through; a write without the route's
 * transaction (`transaction: false`, or an Api whose routes open their own), the `Pool`.
 */
type HandlerArgs<M extends Method, T extends false | undefined, W extends Writes> = M extends 'get'
  ? [db: Reader]
  : W extends 'own-transactions'
    ? [db: Pool]
    : T extends false
      ? [db: Pool]
      : [trx: Knex.Transaction, effects: Effects];

/** A handler gets the validated input, the Koa context, and where to read and write. */
type Handler<P, Q, B, R, Args extends unknown[]> = (
  input: RouteInput<P, Q, B>,
  ctx: Context,
  ...args: Args
) => R extends Schema ? Promise<z.input<R>> : Promise<void>;

export type AnySpec = RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined, Schema | undefined>;

/**
 * What a group's write routes cause besides their answer (webhook events). `open` gives one attempt
 * of a write route its `Effects`, in the route's transaction; `close` runs after the handler, with its
 * answer, in the same transaction, so the change and its effects commit together or not at all (a
 * retried attempt opens afresh: its events are written once).
 */
export type RouteEffects = {
  /** The routes that have effects whatever their handler does: they must run in a transaction. */
  declares(spec: AnySpec): boolean;
  open(
    trx: Knex.Transaction,
    spec: AnySpec,
    input: AnyRouteInput,
    ctx: Context,
  ): { effects: Effects; close(body: unknown): Promise<void> };
};

/** A group without effects: its write routes declare none, and emitting one is a mistake. */
const noEffects: RouteEffects = {
  declares: () => false,
  open: (_trx, spec) => ({
    effects: {
      emit: (event) =>
        Promise.reject(new Error(`${spec.method} ${spec.path} emits ${event}: its group has no effects`)),
    },
    close: () => Promise.resolve(),
  }),
};

function parse<S extends Schema | undefined>(schema: S, value: unknown, where: string): Out<S> {
  if (!schema) {
    return undefined as Out<S>;
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    // An unknown key is named as its own path, as any other invalid parameter or field is.
    const details = result.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ in: where, path: [...issue.path, key].join('.'), message: 'Unrecognized key' }))
        : [{ in: where, path: issue.path.join('.'), message: issue.message }],
    );
    const named = [...new Set(details.map(({ path }) => path.slice(0, 64)).filter(Boolean))].slice(0, 5);
    if (where === 'query' && named.length > 0 && named.every(isSearchParameter)) {
      throw new RequestError(
        'request.invalid_input',
        { details: details.map(({ path, message }) => `${path}: ${message}`).join('; ') },
        { status: 400 },
      );
    }
    throw new RequestError(
      'guard.invalid_input',
      { reason: `The request ${where} is invalid${named.length > 0 ? ` (${named.join(', ')})` : ''}.` },
      { details },
    );
  }
  return result.data as Out<S>;
}

/** A router that remembers the specs of its routes, for the OpenAPI document. */
export class Api<W extends Writes = 'in-transaction'> {
  readonly router = new Router();
  readonly specs: AnySpec[] = [];

  private readonly db: Knex;
  private readonly options: { effects?: RouteEffects; writes?: W };

  /**
   * `writes: 'own-transactions'`: the group's write routes get the pool and open their own
   * transactions (the end user's flows: their state lives in the provider's interaction, they send
   * messages, and a failed verification must be counted even though the request fails).
   * `before`: what runs ahead of each of the group's routes, and only of them: who may call the
   * group (the cross-site check of a group that acts on the browser's cookie), then its body parser.
   */
  constructor(db: Knex, options: { effects?: RouteEffects; writes?: W; before?: Middleware[] } = {}) {
    this.db = db;
    this.options = options;
    // Registered ahead of every route: the router runs them for a request one of its routes matches.
    for (const middleware of options.before ?? []) {
      this.router.use(middleware);
    }
  }

  add<
    M extends Method,
    P extends Schema | undefined,
    Q extends Schema | undefined,
    B extends Schema | undefined,
    R extends Schema | undefined,
    T extends false | undefined = undefined,
  >(
    spec: RouteSpec<P, Q, B, R> & { method: M; transaction?: T },
    handler: Handler<P, Q, B, R, HandlerArgs<M, T, W>>,
  ): void {
    this.specs.push(spec);
    const success = spec.status ?? (spec.response ? 200 : 204);
    const inTransaction =
      spec.method !== 'get' && spec.transaction !== false && this.options.writes !== 'own-transactions';
    const effects = this.options.effects ?? noEffects;
    if (effects.declares(spec) && !inTransaction) {
      throw new Error(`${spec.method} ${spec.path}: a route with effects runs in a transaction`);
    }
    const run = handler as Handler<P, Q, B, R, [Knex, Effects?]>;
    this.router[spec.method](spec.path, async (ctx) => {
      for (const [where, values] of [
        ['path', ctx.params],
        ['query', ctx.query],
      ] as const) {
        if (holdsNul(values)) {
          throw nulRefused(where);
        }
      }
      const input = {
        params: parse(spec.params, ctx.params, 'path'),
        query: parse(spec.query, flattenSearchParams(ctx.query), 'query'),
        body: parse(spec.body, (ctx.request as { body?: unknown }).body ?? {}, 'body'),
      } as RouteInput<P, Q, B>;
      const attempt = async (trx: Knex.Transaction) => {
        // Set first (again on a retry) so a handler may answer otherwise (a registration's 201, a reset's 204).
        ctx.status = success;
        const opened = effects.open(trx, spec, input, ctx);
        const result = await run(input, ctx, trx, opened.effects);
        await opened.close(result);
        return result;
      };
      const direct = () => {
        ctx.status = success;
        return run(input, ctx, this.db);
      };
      const body = inTransaction ? await withTransaction(this.db, attempt) : await direct();
      if (ctx.status !== 204) {
        // Koa turns a null body into 204; a route that answers 200/201 without content sends `{}`.
        ctx.body = body ?? {};
      }
    });
  }
}

/** A query value given once or repeated (`?types=SPA&types=Native`) becomes an array. */
export const queryList = <T extends Schema>(item: T) =>
  z.preprocess((value) => (value === undefined || Array.isArray(value) ? value : [value]), z.array(item));

export const queryBoolean = z.enum(['true', 'false']).transform((value) => value === 'true');
