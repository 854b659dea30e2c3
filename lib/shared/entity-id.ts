import { z } from 'zod';

/**
 * The id of an entity the service keeps (a user, a role, an organization, a hook…), as a path
 * parameter or a body names it: the columns are `string(21)` (storage/ids.ts makes ids of that length),
 * so a longer id is refused as input (400) before it can reach a query. Application ids are longer (64).
 */
export const entityId = z.string().min(1).max(21);

/** The path parameters of a route under `/…/:id`. */
export const idParams = z.object({ id: entityId });

/** The path parameters of a route under `/users/:userId`. */
export const userParams = z.object({ userId: entityId });
