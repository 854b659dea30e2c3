import { createTransport } from 'nodemailer';

import { renderCodeEmail, renderInvitationEmail } from './email-templates.ts';
import type { MessageConnector } from './message-connector.ts';

/**
 * Sends email through the SMTP server of SMTP_URL (`smtps://` for implicit TLS; `smtp://` upgrades
 * with STARTTLS when the server offers it). One connection per message: codes are few, and no idle
 * socket outlives the service. Short timeouts, because a user waits on the request that sends.
 */
export function smtpConnector({ url, from }: { url: string; from: string }): MessageConnector {
  const transport = createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  return {
    async send(message) {
      if (message.type !== 'email') {
        throw new Error(`the SMTP connector sends email, not ${message.type} messages`);
      }
      const email =
        message.purpose === 'OrganizationInvitation'
          ? renderInvitationEmail(message)
          : renderCodeEmail(message.purpose, message.code);
      await transport.sendMail({ from, to: message.to, ...email });
    },
  };
}
