import type { Queryable } from '../storage/database.ts';
import { deleteModelsOfAccount } from './queries.ts';

/*
 * The one write that users/ make to oidc-provider's model table (oidc/adapter.ts makes the rest):
 * below both, so users/ never import oidc/.
 */

/** Ends everything a user holds: sessions, grants, codes and tokens (on suspension or deletion). */
export async function revokeAccount(db: Queryable, accountId: string): Promise<void> {
  await deleteModelsOfAccount(db, accountId);
}
