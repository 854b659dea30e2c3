import type { Knex } from 'knex';

import { generateId } from '../storage/ids.ts';
import { recipientKey, type CodePurpose } from './codes.ts';
import type { MessageConnector } from './message-connector.ts';

export type DevelopmentMessage = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: CodePurpose;
  code: string;
  createdAt: number;
};

/** Codes outlive their 10 minutes here only to explain what happened; a day is plenty. */
const retentionMs = 24 * 60 * 60 * 1000;
export const developmentMessagesPageSize = 100;

/** Keeps messages in `development_messages` instead of sending them, for local use and tests. */
export function developmentConnector(db: Knex): MessageConnector {
  let lastCreatedAt = 0;
  return {
    async send({ to, type, purpose, code }) {
      // Strictly increasing per instance, so "newest first" holds for two sends in one millisecond.
      lastCreatedAt = Math.max(Date.now(), lastCreatedAt + 1);
      await db('development_messages').insert({
        id: generateId(),
        recipient: recipientKey({ type, value: to }),
        type,
        purpose,
        code,
        created_at: lastCreatedAt,
      });
      await db('development_messages')
        .where('created_at', '<', lastCreatedAt - retentionMs)
        .delete();
    },
  };
}

type Row = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: CodePurpose;
  code: string;
  created_at: number;
};

/** The newest messages first, to one recipient (an email or a phone number, normalised) or to anyone. */
export async function listDevelopmentMessages(db: Knex, recipient?: string): Promise<DevelopmentMessage[]> {
  const query = db('development_messages').orderBy('created_at', 'desc').limit(developmentMessagesPageSize);
  if (recipient !== undefined) {
    query.where({ recipient: recipientKey({ type: recipient.includes('@') ? 'email' : 'phone', value: recipient }) });
  }
  const rows = await query.select<Row[]>('*');
  return rows.map(({ created_at: createdAt, ...row }) => ({ ...row, createdAt }));
}
