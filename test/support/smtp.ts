import { SMTPServer } from 'smtp-server';

import { freePort } from './service.ts';

export type ReceivedMail = { from: string; to: string[]; user?: string; raw: string };
export type SmtpTestServer = { port: number; received: ReceivedMail[]; stop(): Promise<void> };

/** A local SMTP server without TLS that keeps what it receives; accepts any login. */
export async function startSmtpServer(): Promise<SmtpTestServer> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map(({ address }) => address),
          user: session.user as string | undefined,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, received, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

export const subjectOf = (raw: string) => /^Subject: (.*)$/m.exec(raw)?.[1];

/**
 * A received message as a reader sees its text: quoted-printable soft line breaks joined and `=XX`
 * bytes decoded (nodemailer encodes long or non-ASCII lines so), so links and names can be searched.
 */
export function readableMail(raw: string): string {
  const joined = raw.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let index = 0; index < joined.length; index++) {
    const hex = joined[index] === '=' ? /^[\dA-F]{2}$/.exec(joined.slice(index + 1, index + 3)) : null;
    if (hex) {
      bytes.push(Number.parseInt(hex[0], 16));
      index += 2;
    } else {
      bytes.push(...Buffer.from(joined[index]));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
