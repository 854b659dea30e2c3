import { z } from 'zod';

/**
 * A JSON column's reader: the text parsed and checked against `schema` once, where rows become
 * entities. Stored data that does not match fails here, naming the table and the column (and what
 * did not match, never the value: a column may hold personal data).
 */
export function jsonColumn<S extends z.ZodType>(table: string, column: string, schema: S) {
  return (text: string): z.output<S> => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error(`${table}.${column} holds text that is not JSON`);
    }
    const result = schema.safeParse(value);
    if (!result.success) {
      throw new Error(`${table}.${column} holds JSON that does not match its schema: ${z.prettifyError(result.error)}`);
    }
    return result.data;
  };
}

/** A JSON object of any shape (custom data, an IdP's details), as most JSON columns hold. */
export const anyJsonObject = z.record(z.string(), z.unknown());
