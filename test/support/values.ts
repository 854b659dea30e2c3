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
