import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { storedDetailsSchema } from './email-template-schemas.ts';
import type { Message } from './message-connector.ts';
import type { TemplateDetails } from './render-template.ts';

/* `development_messages`: the messages the development connector kept instead of sending them. */

/** A verification code has its `code`; an invitation its `link`, and a `code` when the caller gave one. */
export type DevelopmentMessage = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: Message['purpose'];
  code?: string;
  link?: string;
  /** The language the message was asked in, and the operator's template it was written from. */
  locale?: string;
  template?: TemplateDetails;
  createdAt: number;
};

type DevelopmentMessageRow = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: Message['purpose'];
  code: string | null;
  link: string | null;
  details: string | null;
  created_at: number;
};

const detailsOf = jsonColumn(
  'development_messages',
  'details',
  z.object({ locale: z.string().optional(), template: storedDetailsSchema.optional() }),
);

export async function insertDevelopmentMessage(db: Queryable, message: DevelopmentMessage): Promise<void> {
  await db('development_messages').insert({
    id: message.id,
    recipient: message.recipient,
    type: message.type,
    purpose: message.purpose,
    code: message.code ?? null,
    link: message.link ?? null,
    details:
      message.locale === undefined && message.template === undefined
        ? null
        : JSON.stringify({ locale: message.locale, template: message.template }),
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
  return rows.map(({ id, recipient, type, purpose, code, link, details, created_at: createdAt }) => ({
    id,
    recipient,
    type,
    purpose,
    ...(code === null ? {} : { code }),
    ...(link === null ? {} : { link }),
    ...(details === null ? {} : detailsOf(details)),
    createdAt,
  }));
}
