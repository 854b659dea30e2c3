import type { Transporter } from 'nodemailer';

import { composeEmail, type EmailSources } from './compose-email.ts';
import type { MessageConnector } from './message-connector.ts';

/** The address of SMTP_FROM (`Name <address>` or `address`), for a template that names its own sender. */
const addressOf = (from: string) => /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();

/**
 * Sends email through the SMTP server of SMTP_URL (`smtps://` for implicit TLS; `smtp://` upgrades
 * with STARTTLS when the server offers it). One connection per message: codes are few, and no idle
 * socket outlives the service. Short timeouts, because a user waits on the request that sends.
 * The email is the operator's template for the message where one matches (`email_templates`), else
 * the built-in one (in the message's language and the sign-in experience's branding); a template's
 * sender name goes with SMTP_FROM's address.
 */
export function smtpConnector({ url, from }: { url: string; from: string }, sources: EmailSources): MessageConnector {
  // Loaded with the first message, not at every start (lib/mfa/totp.ts says why).
  let transport: Promise<Transporter> | undefined;
  return {
    async send(message) {
      if (message.type !== 'email') {
        throw new Error(`the SMTP connector sends email, not ${message.type} messages`);
      }
      const { senderName, ...email } = await composeEmail(sources, message);
      transport ??= import('nodemailer').then(({ createTransport }) =>
        createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 }),
      );
      const sender = await transport;
      await sender.sendMail({
        from: senderName ? { name: senderName, address: addressOf(from) } : from,
        to: message.to,
        ...email,
      });
    },
  };
}
