import type { Queryable } from '../../storage/database.ts';

/*
 * `message_sends`: one row per verification message sent, by recipient key, for the send limit; and
 * `message_recipients`, one row per recipient, the lock the limit's check takes.
 */

/** Takes the recipient's lock row for the transaction (an upsert: a write lock at once, even for a new recipient). */
export async function lockRecipient(db: Queryable, recipient: string, now: number): Promise<void> {
  await db('message_recipients')
    .insert({ recipient, last_sent_at: now })
    .onConflict('recipient')
    .merge({ last_sent_at: now });
}

export async function countSendsSince(db: Queryable, recipient: string, since: number): Promise<number> {
  const [{ sends }] = await db('message_sends')
    .where({ recipient })
    .andWhere('created_at', '>', since)
    .count({ sends: '*' });
  return Number(sends);
}

export async function insertSend(db: Queryable, recipient: string, at: number): Promise<void> {
  await db('message_sends').insert({ recipient, created_at: at });
}

export async function deleteSendsUpTo(db: Queryable, recipient: string, until: number): Promise<void> {
  await db('message_sends').where({ recipient }).andWhere('created_at', '<=', until).delete();
}
