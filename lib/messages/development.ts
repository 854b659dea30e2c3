import type { Knex } from 'knex';

import { generateId } from '../storage/ids.ts';
import { recipientKey } from './codes.ts';
import { findTemplateFor } from './compose-email.ts';
import type { MessageConnector } from './message-connector.ts';
import {
  deleteDevelopmentMessagesBefore,
  type DevelopmentMessage,
  insertDevelopmentMessage,
  listDevelopmentMessageRows,
} from './queries.ts';

/** Codes outlive their 10 minutes here only to explain what happened; a day is plenty. */
const retentionMs = 24 * 60 * 60 * 1000;
export const developmentMessagesPageSize = 100;

/** Keeps messages in `development_messages` instead of sending them, for local use and tests. */
export function developmentConnector(db: Knex): MessageConnector {
  let lastCreatedAt = 0;
  return {
    async send(message) {
      // What an SMTP send would have written the email from: the operator's template in its language.
      const locale = 'locale' in message ? message.locale : undefined;
      const template =
        message.type === 'email' && message.purpose !== 'HookDisabled'
          ? await findTemplateFor(db, message.purpose, locale)
          : undefined;
      // Strictly increasing per instance, so "newest first" holds for two sends in one millisecond.
      lastCreatedAt = Math.max(Date.now(), lastCreatedAt + 1);
      const { to, type, purpose } = message;
      await insertDevelopmentMessage(db, {
        id: generateId(),
        recipient: recipientKey({ type, value: to }),
        type,
        purpose,
        code: 'code' in message ? message.code : undefined,
        link: message.purpose === 'OrganizationInvitation' ? message.link : undefined,
        locale,
        template,
        createdAt: lastCreatedAt,
      });
      await deleteDevelopmentMessagesBefore(db, lastCreatedAt - retentionMs);
    },
  };
}

/** The newest messages first, to one recipient (an email or a phone number, normalised) or to anyone. */
export async function listDevelopmentMessages(db: Knex, recipient?: string): Promise<DevelopmentMessage[]> {
  return listDevelopmentMessageRows(
    db,
    developmentMessagesPageSize,
    recipient === undefined
      ? undefined
      : recipientKey({ type: recipient.includes('@') ? 'email' : 'phone', value: recipient }),
  );
}
