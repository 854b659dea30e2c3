import type { Knex } from 'knex';

import type { Config } from '../config/env.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { findTemplateFor } from './compose-email.ts';
import { developmentConnector } from './development.ts';
import { emailLooks } from './email-look.ts';
import type { MessageConnector } from './message-connector.ts';
import { smtpConnector } from './smtp.ts';

export type { MessageAbout, MessageConnector, VerificationMessage } from './message-connector.ts';

/** The connector for each identifier type a code can be sent to; none: codes to it cannot be sent. */
export type Connectors = { email?: MessageConnector; phone?: MessageConnector };

/**
 * Email goes through SMTP when SMTP_URL is set, else to the development store. Phone goes to the
 * development store: an SMS provider would be another MessageConnector chosen here. The development
 * store keeps codes readable in the database, so production never uses it (start-up warns).
 */
export function createConnectors(config: Config, db: Knex, cache: SharedCache): Connectors {
  const development = config.production ? undefined : developmentConnector(db);
  return {
    email: config.smtp
      ? smtpConnector(config.smtp, {
          templates: (purpose, locale) => findTemplateFor(db, purpose, locale),
          look: emailLooks(db, cache),
        })
      : development,
    phone: development,
  };
}
