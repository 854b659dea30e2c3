/**
 * A `let` that before() assigns is still unassigned in after() when before() failed part way, though
 * its type says otherwise: after() reads it through this to stop only what was started.
 */
export const ifSet = <T>(value: T): T | undefined => value;
