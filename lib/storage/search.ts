import type { Knex } from 'knex';

import { isSqlite, type Queryable } from './database.ts';

/**
 * Logto's list search (`search`, `search.<field>`, `mode[.<field>]`, `joint`, `isCaseSensitive`), as
 * the HTTP layer parsed and checked it (http/api/search.ts), and the SQL it becomes: the same matches on
 * SQLite, MySQL/MariaDB and PostgreSQL.
 *
 * - `exact`: the whole value equals one of the values.
 * - `like`: the whole value matches the pattern as PostgreSQL's LIKE reads it: `%` any run of
 *   characters, `_` one character, `\` makes the next character (`\%`, `\_`, `\\`) plain.
 * - Without `isCaseSensitive`, both sides are lower-cased first (Unicode, the same on every database:
 *   SQLite's own `lower()` and LIKE fold ASCII only, so SQLite gets `fold_case`, see database.ts).
 */
export type SearchMode = 'exact' | 'like';
/** One `search` (every field: `field` undefined) or `search.<field>` parameter and its values. */
export type SearchMatch = { field?: string; mode: SearchMode; values: string[] };
export type Search = { matches: SearchMatch[]; joint: 'and' | 'or'; isCaseSensitive: boolean };
/** The fields a list searches, as clients name them (the response's field) → their column. */
export type SearchColumns = Readonly<Record<string, string>>;

type Token = { wildcard: '%' | '_' } | { char: string };

/** A LIKE pattern in PostgreSQL's syntax, read; undefined when it ends with a lone `\` (PostgreSQL refuses it). */
export function likeTokens(pattern: string): Token[] | undefined {
  const tokens: Token[] = [];
  // Code points: what `_` stands for, and what `\` escapes, on every database.
  const chars = Array.from(pattern);
  for (let index = 0; index < chars.length; index++) {
    const char = chars[index];
    if (char === '\\') {
      index++;
      if (index === chars.length) {
        return undefined;
      }
      tokens.push({ char: chars[index] });
    } else if (char === '%' || char === '_') {
      tokens.push({ wildcard: char });
    } else {
      tokens.push({ char });
    }
  }
  return tokens;
}

/** For `LIKE … ESCAPE '!'` on MySQL and PostgreSQL (a backslash is an escape in MySQL's string literals). */
const toLike = (tokens: Token[]) =>
  tokens.map((token) => ('wildcard' in token ? token.wildcard : token.char.replace(/^[!%_]$/, '!$&'))).join('');

/** For SQLite's GLOB, its case-sensitive LIKE: `*`, `?` and a `[…]` set are its wildcards. */
const toGlob = (tokens: Token[]) =>
  tokens
    .map((token) => {
      if ('wildcard' in token) {
        return token.wildcard === '%' ? '*' : '?';
      }
      return token.char.replace(/^[*?[]$/, '[$&]');
    })
    .join('');

function tokensOf(mode: SearchMode, value: string): Token[] {
  if (mode === 'exact') {
    return Array.from(value, (char) => ({ char }));
  }
  const tokens = likeTokens(value);
  if (!tokens) {
    throw new Error(
      'a LIKE pattern ending with its escape character reached the query (http/api/search.ts refuses it)',
    );
  }
  return tokens;
}

/**
 * One column against one value. Every database compares text byte for byte here (MySQL's tables are
 * utf8mb4_bin, migrations/collation.ts; PostgreSQL's `=` and LIKE are exact), so a case-sensitive
 * match takes the column as it is and can use its index; MySQL's `=` ignores trailing spaces (PAD
 * SPACE), which comparing lengths undoes.
 */
function condition(sqlite: boolean, mode: SearchMode, caseSensitive: boolean, column: string, value: string) {
  if (mode === 'exact' && caseSensitive) {
    return { sql: '(?? = ? and length(??) = length(?))', bindings: [column, value, column, value] };
  }
  const tokens = tokensOf(mode, value);
  if (!caseSensitive) {
    const fold = sqlite ? 'fold_case' : 'lower';
    return { sql: `${fold}(??) like ${fold}(?) escape '!'`, bindings: [column, toLike(tokens)] };
  }
  return sqlite
    ? { sql: '?? glob ?', bindings: [column, toGlob(tokens)] }
    : { sql: `?? like ? escape '!'`, bindings: [column, toLike(tokens)] };
}

/** Adds the search's conditions to a list's query: each match over its field (or every field), joined by `joint`. */
export function whereSearch(db: Queryable, query: Knex.QueryBuilder, search: Search, columns: SearchColumns): void {
  if (search.matches.length === 0) {
    return;
  }
  const sqlite = isSqlite(db);
  query.where((all) => {
    for (const { field, mode, values } of search.matches) {
      const targets = field === undefined ? Object.values(columns) : [columns[field]];
      const any = (builder: Knex.QueryBuilder) => {
        for (const column of targets) {
          for (const value of values) {
            const { sql, bindings } = condition(sqlite, mode, search.isCaseSensitive, column, value);
            builder.orWhereRaw(sql, bindings);
          }
        }
      };
      if (search.joint === 'and') {
        all.andWhere(any);
      } else {
        all.orWhere(any);
      }
    }
  });
}
