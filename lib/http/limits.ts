import { z } from 'zod';

import { RequestError } from './errors.ts';

/*
 * How much a request may hold, so that whatever the API accepts the database stores, on SQLite as on
 * MySQL. String limits count characters (code points), as zod's `.max()` and MySQL's utf8mb4
 * `varchar(n)` do, so a field's `.max(n)` fits a `varchar(n)` column. Columns that hold JSON are
 * mediumtext on MySQL (16 MiB, migration 0015), far above one body; JSON that grows by merging is
 * capped as a whole where it is merged (`assertJsonFits`).
 */

/** A request body, in bytes. */
export const maxBodyBytes = 1024 * 1024;
/** Nesting of a JSON body: more than any real document needs, little enough for recursive code (JSON.stringify, zod). */
export const maxJsonDepth = 32;

/** Custom data of a user, an application or an organization, merged or not. */
export const customDataBytes = 256 * 1024;
/** JSON that comes from elsewhere and is kept: identity details, subject-token context, connector data and configuration. */
export const foreignJsonBytes = 64 * 1024;
/** All of a user's social identities together (each up to `foreignJsonBytes` of details). */
export const identitiesBytes = 1024 * 1024;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const tooLarge = (maxBytes: number) => `must be at most ${maxBytes} bytes as JSON`;

/** A JSON object of any shape, at most `maxBytes` serialized; the OpenAPI document says so in `x-max-bytes`. */
const jsonObject = (maxBytes: number) =>
  z
    .record(z.string(), z.unknown())
    .refine((value) => jsonBytes(value) <= maxBytes, tooLarge(maxBytes))
    .meta({ 'x-max-bytes': maxBytes });

/** Custom data in a request body. */
export const customDataInput = jsonObject(customDataBytes);
/** JSON from elsewhere in a request body (identity details, subject-token context, connector data and configuration). */
export const foreignJsonInput = jsonObject(foreignJsonBytes);

/** A map (header names to values, locales to names) of at most `maxKeys` entries. */
export const boundedRecord = <K extends z.ZodString, V extends z.ZodType>(key: K, value: V, maxKeys: number) =>
  z
    .record(key, value)
    .refine((record) => Object.keys(record).length <= maxKeys, `must have at most ${maxKeys} entries`)
    .meta({ maxProperties: maxKeys });

/** For JSON assembled from several requests (a merge): 400 naming the field when it outgrows `maxBytes`. */
export function assertJsonFits(value: unknown, maxBytes: number, path: string): void {
  if (jsonBytes(value) > maxBytes) {
    throw new RequestError(
      'guard.invalid_input',
      { reason: 'The request body is invalid.' },
      {
        details: [{ in: 'body', path, message: `${tooLarge(maxBytes)} (with what is stored)` }],
      },
    );
  }
}
