import type { Knex } from 'knex';
import { z } from 'zod';

import type { Effects } from '../../shared/event-data.ts';
import type { RequestError } from '../errors.ts';
import { setTotal } from './pagination.ts';
import type { Api } from './route.ts';
import type { ApiTag } from './tags.ts';

type Schema = z.ZodType;
type Ids = string[];

/** Where the links of one parent are kept: a link table, or the queries of a domain that owns it. */
export type LinkStore<Parent> = {
  ids(db: Knex | Knex.Transaction, parent: Parent): Promise<Ids>;
  /** Links the ids not linked yet; returns those. */
  add(trx: Knex.Transaction, parent: Parent, ids: Ids): Promise<Ids>;
  /** Unlinks the ids; returns how many were linked. */
  remove(trx: Knex.Transaction, parent: Parent, ids: Ids): Promise<number>;
};

/** What one write changed, for a relation whose change is an event (`changed`). */
export type LinkChange = { added: Ids; removed: Ids };

type Write<Body> = {
  summary: string;
  /** The body as Logto takes it; `child.check` reads the ids from it. */
  body: z.ZodType<Body>;
  /** Documents what the route answers; without it the route answers without content (or `{}`, see Api). */
  response?: Schema;
  /** The answer, from the body, the ids it named and those newly linked. */
  answer?: (body: Body, ids: Ids, added: Ids) => unknown;
  status?: number;
  errors: number[];
};

/**
 * A set of links from one parent to many children (an organization's users, a role's scopes): the
 * list, add, replace and remove routes Logto answers for every such relation, from one declaration.
 * Every part that differs between relations is declared here; the builder only orders the steps.
 */
export type LinkSet<P extends Schema, Parent, Body, Q extends Schema, R extends Schema> = {
  tag: ApiTag;
  /** The set's path, under the parent's: `/organizations/:id/users`. */
  path: string;
  /** The parent's path parameters. */
  params: P;
  parent: {
    /** For a read: the parent, or the error that it is missing (404). */
    find(db: Knex, params: z.output<P>): Promise<Parent>;
    /**
     * For a write: the parent, locked FOR UPDATE until the transaction ends where concurrent changes
     * of the set must run one after the other (docs/decisions.md "Concurrency").
     */
    lock(trx: Knex.Transaction, params: z.output<P>): Promise<Parent>;
  };
  child: {
    /** The path parameter naming one child (`userId`) and its schema. */
    param: string;
    id: z.ZodType<string>;
    /** The ids an add or replace body names, checked to exist and to fit the parent (else 422, …). */
    check(trx: Knex.Transaction, parent: NoInfer<Parent>, body: Body): Promise<Ids> | Ids;
    /** The error when the child to remove is not linked. */
    missing(id: string): RequestError;
  };
  store: LinkStore<Parent>;
  /** A change that is an event: emits it through the route's effects (lib/management/route-events.ts names it). */
  changed?: (effects: Effects, params: z.output<P>, change: LinkChange) => Promise<void>;
  list?: {
    summary: string;
    query: Q;
    response: R;
    errors: number[];
    /** One page of the children, and how many there are (the `Total-Number` header). */
    page(db: Knex, parent: Parent, query: z.output<Q>): Promise<{ items: z.input<R>; total: number }>;
  };
  add?: Write<Body>;
  replace?: Write<Body>;
  remove?: { summary: string; errors: number[] };
};

/** Registers the routes of one link set; a part the declaration leaves out is a route Logto does not have. */
export function linkSetRoutes<P extends z.ZodObject, Parent, Body, Q extends Schema, R extends Schema>(
  api: Api,
  db: Knex,
  set: LinkSet<P, Parent, Body, Q, R>,
): void {
  const { tag, path, params, parent, child, store, list } = set;
  if (list) {
    // Api checks a handler's answer against a concrete schema; `page` was checked against R where declared.
    const response: Schema = list.response;
    api.add(
      {
        method: 'get',
        path,
        summary: list.summary,
        tag,
        params,
        query: list.query,
        response,
        errors: list.errors,
      },
      async (input, ctx) => {
        const found = await parent.find(db, input.params as z.output<P>);
        const { items, total } = await list.page(db, found, input.query as z.output<Q>);
        setTotal(ctx, total);
        return items;
      },
    );
  }

  const write = (
    method: 'post' | 'put',
    spec: Write<Body>,
    link: (trx: Knex.Transaction, found: Parent, ids: Ids) => Promise<LinkChange>,
  ) => {
    api.add(
      {
        method,
        path,
        summary: spec.summary,
        tag,
        params,
        body: spec.body,
        response: spec.response,
        status: spec.status,
        errors: spec.errors,
      },
      async (input, _ctx, trx, effects) => {
        const found = await parent.lock(trx, input.params as z.output<P>);
        const ids = await child.check(trx, found, input.body);
        const change = await link(trx, found, ids);
        await set.changed?.(effects, input.params as z.output<P>, change);
        return spec.answer?.(input.body, ids, change.added);
      },
    );
  };
  if (set.add) {
    write('post', set.add, async (trx, found, ids) => ({ added: await store.add(trx, found, ids), removed: [] }));
  }
  if (set.replace) {
    write('put', set.replace, async (trx, found, ids) => {
      const wanted = new Set(ids);
      const removed = (await store.ids(trx, found)).filter((id) => !wanted.has(id));
      await store.remove(trx, found, removed);
      return { added: await store.add(trx, found, ids), removed };
    });
  }

  if (set.remove) {
    const itemParams = params.extend({ [child.param]: child.id });
    api.add(
      {
        method: 'delete',
        path: `${path}/:${child.param}`,
        summary: set.remove.summary,
        tag,
        params: itemParams,
        errors: set.remove.errors,
      },
      async (input, _ctx, trx, effects) => {
        const id = (input.params as Record<string, string>)[child.param];
        const found = await parent.lock(trx, input.params as z.output<P>);
        if ((await store.remove(trx, found, [id])) === 0) {
          throw child.missing(id);
        }
        await set.changed?.(effects, input.params as z.output<P>, { added: [], removed: [id] });
      },
    );
  }
}
