/**
 * A `let` that before() assigns is still unassigned in after() when before() failed part way, though
 * its type says otherwise: after() reads it through this to stop only what was started.
 */
export const ifSet = <T>(value: T): T | undefined => value;

/** A copy of `value` without the named keys. */
export function omit<T extends object, K extends keyof T>(value: T, ...keys: K[]): Omit<T, K> {
  const omitted: PropertyKey[] = keys;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !omitted.includes(key))) as Omit<T, K>;
}

let counter = 0;
/**
 * A name nobody has used yet in this process: `prefix`, the time in base 36 (always 8 characters) and a
 * counter. Letters and digits only, so the one value passes as a username, a host name label, an email's
 * local part and a display name.
 */
export const unique = (prefix: string): string => `${prefix}${Date.now().toString(36)}${++counter}`;
