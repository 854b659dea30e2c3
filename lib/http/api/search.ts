import { z } from 'zod';

import { likeTokens, type Search, type SearchColumns, type SearchMatch } from '../../storage/search.ts';
import { paginationQuery } from './pagination.ts';

/**
 * Logto's search parameters of a list (its "advanced user search", on every list that takes `search`):
 *
 * - `search=…` matches any of the list's fields, `search.<field>=…` that field; repeated, its values
 *   are alternatives (only in `exact` mode);
 * - `mode=…` (every field) or `mode.<field>=…`: `like` (default) or `exact`;
 * - `joint=or` (default) or `and` (also spelt `jointMode`) joins the `search` parameters;
 * - `isCaseSensitive=true` (default false).
 *
 * `like` takes Logto's (PostgreSQL's) LIKE pattern, matched against the whole value: `%alice%` contains
 * "alice", `%@example.com` ends with it; `\%`, `\_`, `\\` are a plain `%`, `_`, `\`. What a list does
 * not support is refused with 400 naming the parameter, never ignored: an unknown field or parameter
 * (the list's query is strict, pagination.ts), a mode other than `like` and `exact` (`similar_to` and
 * `posix` are PostgreSQL's regular expressions; docs/decisions.md), an empty value, several values in
 * `like` mode, a pattern that ends with its escape character.
 */
const value = z.string().max(256);

/**
 * Whether a query parameter is one of the search's: a refusal naming only such parameters is Logto's
 * 400 `request.invalid_input` (route.ts), as its advanced search answers, not `guard.invalid_input`.
 */
export const isSearchParameter = (path: string): boolean =>
  /^(search|mode)(\.|$)/.test(path) || ['joint', 'jointMode', 'isCaseSensitive'].includes(path);
const values = z.union([value, z.array(value).min(1).max(100)]);
const mode = z.enum(['like', 'exact'], {
  error: 'expected like or exact (similar_to and posix, PostgreSQL regular expressions, are not supported)',
});
const joint = z.enum(['or', 'and']);

/** The list's query: pagination, the route's own parameters (`shape`) and the search over `columns`' fields. */
export function searchListQuery<S extends z.ZodRawShape>(columns: SearchColumns, shape: S) {
  const fields = Object.keys(columns);
  const described = `any of ${fields.join(', ')}`;
  const searchShape: Record<string, z.ZodType> = {
    search: values.optional().describe(`LIKE pattern (or values, in exact mode) matched against ${described}`),
    mode: mode.optional().describe('how every `search` parameter matches: like (default) or exact'),
    joint: joint.optional().describe('how the `search` parameters combine: or (default) or and'),
    jointMode: joint.optional().describe('the same as joint'),
    isCaseSensitive: z.enum(['true', 'false']).optional(),
  };
  for (const field of fields) {
    searchShape[`search.${field}`] = values.optional();
    searchShape[`mode.${field}`] = mode.optional();
  }
  const own = paginationQuery.extend(shape);
  return own.extend(searchShape).transform((query, ctx) => {
    const given = query as Record<string, string | string[] | undefined>;
    const matches: SearchMatch[] = [];
    for (const field of [undefined, ...fields]) {
      const key = field === undefined ? 'search' : `search.${field}`;
      const raw = given[key];
      if (raw === undefined) {
        continue;
      }
      const list = Array.isArray(raw) ? raw : [raw];
      const fieldMode = field === undefined ? undefined : given[`mode.${field}`];
      const matchMode = (fieldMode ?? given.mode ?? 'like') as SearchMatch['mode'];
      const problem = list.some((item) => item === '')
        ? 'a search value cannot be empty'
        : matchMode === 'like' && list.length > 1
          ? 'several values need the `exact` mode'
          : matchMode === 'like' && likeTokens(list[0]) === undefined
            ? 'a like pattern cannot end with its escape character \\'
            : undefined;
      if (problem) {
        ctx.issues.push({ code: 'custom', message: problem, input: raw, path: [key] });
        continue;
      }
      matches.push({ field, mode: matchMode, values: list });
    }
    const search: Search = {
      matches,
      joint: (given.joint ?? given.jointMode ?? 'or') as Search['joint'],
      isCaseSensitive: given.isCaseSensitive === 'true',
    };
    const rest = Object.fromEntries(Object.entries(query).filter(([key]) => key in own.shape));
    return { ...(rest as z.output<typeof own>), search };
  });
}

/**
 * `search_params[<key>]=…`, the deepObject form of the `search_params` object that Logto's OpenAPI
 * document (and so `@logto/api`'s client) declares, read as `<key>=…`.
 */
export function flattenSearchParams(query: Record<string, string | string[] | undefined>) {
  const flat: Record<string, string | string[] | undefined> = {};
  for (const [key, value] of Object.entries(query)) {
    const inner = /^search_params\[([^\]]+)\]$/.exec(key)?.[1] ?? key;
    const before = flat[inner];
    flat[inner] = before === undefined || value === undefined ? (value ?? before) : [before, value].flat();
  }
  return flat;
}
