import type { Queryable } from '../storage/database.ts';
import type { Message } from './message-connector.ts';

/* `development_messages`: the messages the development connector kept instead of sending them. */

/** A verification code has its `code`; an invitation its `link`, and a `code` when the caller gave one. */
export type DevelopmentMessage = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: Message['purpose'];
  code?: string;
  link?: string;
  createdAt: number;
};

type DevelopmentMessageRow = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: Message['purpose'];
  code: string | null;
  link: string | null;
  created_at: number;
};

export async function insertDevelopmentMessage(db: Queryable, message: DevelopmentMessage): Promise<void> {
  await db('development_messages').insert({
    id: message.id,
    recipient: message.recipient,
    type: message.type,
    purpose: message.purpose,
    code: message.code ?? null,
    link: message.link ?? null,
    created_at: message.createdAt,
  });
}

export async function deleteDevelopmentMessagesBefore(db: Queryable, before: number): Promise<void> {
  await db('development_messages').where('created_at', '<', before).delete();
}

/** The newest `limit` messages, to one recipient key or to anyone. */
export async function listDevelopmentMessageRows(
  db: Queryable,
  limit: number,
  recipient?: string,
): Promise<DevelopmentMessage[]> {
  const query = db('development_messages').orderBy('created_at', 'desc').limit(limit);
  if (recipient !== undefined) {
    query.where({ recipient });
  }
  const rows = await query.select<DevelopmentMessageRow[]>('*');
  return rows.map(({ id, recipient, type, purpose, code, link, created_at: createdAt }) => ({
    id,
    recipient,
    type,
    purpose,
    ...(code === null ? {} : { code }),
    ...(link === null ? {} : { link }),
    createdAt,
  }));
}
