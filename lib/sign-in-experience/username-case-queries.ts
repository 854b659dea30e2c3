import type { Queryable } from '../storage/database.ts';

/* The usernames that differ only by case (`users.username_key`, migration 0034): what stands in the
   way of a case-insensitive username policy. */

export type UsernameCaseConflicts = {
  totalConflicts: number;
  samples: Array<{ usernameLower: string; userIds: string[] }>;
};

const groups = (db: Queryable) =>
  db('users').whereNotNull('username_key').groupBy('username_key').havingRaw('count(*) > 1');

/** How many groups of usernames collide when case is ignored, and the first `limit` of them. */
export async function usernameCaseConflicts(db: Queryable, limit: number): Promise<UsernameCaseConflicts> {
  const [{ total }] = await db
    .from(groups(db).select('username_key').as('conflicts'))
    .count<Array<{ total: number | string }>>({ total: '*' });
  const keys = await groups(db).orderBy('username_key').limit(limit).pluck<string[]>('username_key');
  const rows = await db('users')
    .whereIn('username_key', keys)
    .orderBy('created_at')
    .select<Array<{ id: string; username_key: string }>>('id', 'username_key');
  return {
    totalConflicts: Number(total),
    samples: keys.map((key) => ({
      usernameLower: key,
      userIds: rows.filter((row) => row.username_key === key).map((row) => row.id),
    })),
  };
}
