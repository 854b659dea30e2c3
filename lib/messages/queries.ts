import type { Queryable } from '../storage/database.ts';
import type { CodePurpose } from './codes.ts';

/* `development_messages`: the codes the development connector kept instead of sending them. */

export type DevelopmentMessage = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: CodePurpose;
  code: string;
  createdAt: number;
};

type DevelopmentMessageRow = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: CodePurpose;
  code: string;
  created_at: number;
};

export async function insertDevelopmentMessage(db: Queryable, message: DevelopmentMessage): Promise<void> {
  await db('development_messages').insert({
    id: message.id,
    recipient: message.recipient,
    type: message.type,
    purpose: message.purpose,
    code: message.code,
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
  return rows.map(({ created_at: createdAt, ...row }) => ({ ...row, createdAt }));
}
