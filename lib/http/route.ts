import Router from '@koa/router';
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { z } from 'zod';

import { withTransaction } from '../storage/transaction.ts';

import { RequestError } from './errors.ts';

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
  tag: string;
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
   * `db`, and runs it again after a deadlock. `false` gives it the pool instead, for a route that
   * waits on the network (no lock is held meanwhile) or must keep what it wrote when it fails: it
   * opens its own transactions (`withTransaction`) around its changes.
   */
  transaction?: false;
};

export type RouteInput<P, Q, B> = { params: Out<P>; query: Out<Q>; body: Out<B> };
/** Any route's input, as code serving every route sees it. */
export type AnyRouteInput = { params: unknown; query: unknown; body: unknown };

/**
 * Where a handler reads and writes: the request's transaction for a write route, the pool for a
 * read (GET) and for a route without a transaction (`transaction: false`, or an Api whose routes
 * open their own).
 */
type HandlerDb<M extends Method, T extends false | undefined, W extends Writes> = M extends 'get'
  ? Knex
  : W extends 'own-transactions'
    ? Knex
    : T extends false
      ? Knex
      : Knex.Transaction;

/** A handler gets the validated input, the Koa context, and where to read and write. */
type Handler<P, Q, B, R, Db> = (
  input: RouteInput<P, Q, B>,
  ctx: Context,
  db: Db,
) => R extends Schema ? Promise<z.input<R>> : Promise<void>;

export type AnySpec = RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined, Schema | undefined>;

/**
 * What some routes cause besides their answer (webhook events), written by `record` in the route's
 * transaction after its handler, so the change and its effects commit together or not at all.
 */
export type RouteEffects = {
  applies(spec: AnySpec): boolean;
  record(trx: Knex.Transaction, spec: AnySpec, input: AnyRouteInput, body: unknown, ctx: Context): Promise<void>;
};

function parse<S extends Schema | undefined>(schema: S, value: unknown, where: string): Out<S> {
  if (!schema) {
    return undefined as Out<S>;
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new RequestError(
      'guard.invalid_input',
      { reason: `The request ${where} is invalid.` },
      {
        details: result.error.issues.map((issue) => ({
          in: where,
          path: issue.path.join('.'),
          message: issue.message,
        })),
      },
    );
  }
  return result.data as Out<S>;
}

/** A router that remembers the specs of its routes, for the OpenAPI document. */
export class Api<W extends Writes = 'in-transaction'> {
  readonly router = new Router();
  readonly specs: AnySpec[] = [];

  /**
   * `writes: 'own-transactions'`: the group's write routes get the pool and open their own
   * transactions (the end user's flows: their state lives in the provider's interaction, they send
   * messages, and a failed verification must be counted even though the request fails).
   */
  constructor(
    private readonly db: Knex,
    private readonly options: { effects?: RouteEffects; writes?: W } = {},
  ) {}

  add<
    M extends Method,
    P extends Schema | undefined,
    Q extends Schema | undefined,
    B extends Schema | undefined,
    R extends Schema | undefined,
    T extends false | undefined = undefined,
  >(
    spec: RouteSpec<P, Q, B, R> & { method: M; transaction?: T },
    handler: Handler<P, Q, B, R, HandlerDb<M, T, W>>,
  ): void {
    this.specs.push(spec);
    const success = spec.status ?? (spec.response ? 200 : 204);
    const inTransaction =
      spec.method !== 'get' && spec.transaction !== false && this.options.writes !== 'own-transactions';
    const effects = this.options.effects?.applies(spec) ? this.options.effects : undefined;
    if (effects && !inTransaction) {
      throw new Error(`${spec.method} ${spec.path}: a route with effects runs in a transaction`);
    }
    const run = handler as Handler<P, Q, B, R, Knex | Knex.Transaction>;
    this.router[spec.method](spec.path, async (ctx) => {
      const input = {
        params: parse(spec.params, ctx.params, 'path'),
        query: parse(spec.query, ctx.query, 'query'),
        body: parse(spec.body, (ctx.request as { body?: unknown }).body ?? {}, 'body'),
      } as RouteInput<P, Q, B>;
      const attempt = async (db: Knex | Knex.Transaction) => {
        // Set first (again on a retry) so a handler may answer otherwise (a registration's 201, a reset's 204).
        ctx.status = success;
        const result = await run(input, ctx, db);
        await effects?.record(db as Knex.Transaction, spec, input, result, ctx);
        return result;
      };
      const body = inTransaction ? await withTransaction(this.db, attempt) : await attempt(this.db);
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
