import Router from '@koa/router';
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';

import { RequestError } from './errors.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Schema = z.ZodType;
type Out<S> = S extends Schema ? z.output<S> : undefined;

/** One management or experience route: its input schemas validate requests and generate the OpenAPI document. */
export type RouteSpec<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, R extends Schema | undefined> = {
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
};

export type RouteInput<P, Q, B> = { params: Out<P>; query: Out<Q>; body: Out<B> };

/**
 * A handler gets the validated input, the Koa context, and where to read and write: the request's
 * transaction when the route has effects (below), the pool otherwise.
 */
type Handler<P, Q, B, R> = (
  input: RouteInput<P, Q, B>,
  ctx: Context,
  db: Queryable,
) => Promise<R extends Schema ? z.input<R> : void>;

export type AnySpec = RouteSpec<Schema | undefined, Schema | undefined, Schema | undefined, Schema | undefined>;

/**
 * What some routes cause besides their answer (webhook events): such a route's handler runs in one
 * transaction with `record`, given to the handler as its `db`, so the change and its effects commit
 * together or not at all.
 */
export type RouteEffects = {
  applies(spec: AnySpec): boolean;
  record(trx: Knex.Transaction, spec: AnySpec, input: RouteInput<unknown, unknown, unknown>, body: unknown, ctx: Context): Promise<void>;
};

function parse<S extends Schema | undefined>(schema: S, value: unknown, where: string): Out<S> {
  if (!schema) {
    return undefined as Out<S>;
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new RequestError({ code: 'guard.invalid_input' }, `The request ${where} is invalid.`, {
      details: result.error.issues.map((issue) => ({
        in: where,
        path: issue.path.join('.'),
        message: issue.message,
      })),
    });
  }
  return result.data as Out<S>;
}

/**
 * MySQL ends one of two transactions that wait on each other (a deadlock) with an error; the
 * transaction was rolled back whole, so running it again is safe.
 */
async function retryOnDeadlock<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== 'ER_LOCK_DEADLOCK' || attempt >= attempts) {
        throw error;
      }
    }
  }
}

/** A router that remembers the specs of its routes, for the OpenAPI document. */
export class Api {
  readonly router = new Router();
  readonly specs: AnySpec[] = [];

  constructor(
    private readonly db: Knex,
    private readonly effects?: RouteEffects,
  ) {}

  add<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, R extends Schema | undefined>(
    spec: RouteSpec<P, Q, B, R>,
    handler: Handler<P, Q, B, R>,
  ): void {
    this.specs.push(spec as AnySpec);
    const success = spec.status ?? (spec.response ? 200 : 204);
    this.router[spec.method](spec.path, async (ctx) => {
      const input = {
        params: parse(spec.params, ctx.params, 'path'),
        query: parse(spec.query, ctx.query, 'query'),
        body: parse(spec.body, (ctx.request as { body?: unknown }).body ?? {}, 'body'),
      } as RouteInput<P, Q, B>;
      // Set first so a handler may answer otherwise (a registration's 201, a reset's 204).
      ctx.status = success;
      const effects = this.effects?.applies(spec as AnySpec) ? this.effects : undefined;
      const body = effects
        ? await retryOnDeadlock(() =>
            this.db.transaction(async (trx) => {
              const result = await handler(input, ctx, trx);
              await effects.record(trx, spec as AnySpec, input as RouteInput<unknown, unknown, unknown>, result, ctx);
              return result;
            }),
          )
        : await handler(input, ctx, this.db);
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
