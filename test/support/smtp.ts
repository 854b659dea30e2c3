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

const encodedWord = /=\?UTF-8\?([BQ])\?([^?]*)\?=/gi;

/** The bytes of one RFC 2047 encoded word's text: base64 (`B`), or quoted-printable with `_` for space (`Q`). */
const wordBytes = (encoding: string, text: string) =>
  encoding.toUpperCase() === 'B'
    ? Buffer.from(text, 'base64')
    : Buffer.from(
        text
          .replace(/_/g, ' ')
          .replace(/=([\dA-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
        'latin1',
      );

/**
 * A message's subject as a reader sees it: folded lines joined, and the encoded words nodemailer
 * writes a non-ASCII subject in (`=?UTF-8?B?…?=`) decoded; adjacent words join without the space
 * between them, their bytes together (a character may be split across two).
 */
export function subjectOf(raw: string): string | undefined {
  const header = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(raw)?.[1];
  return header
    ?.replace(/\r?\n[ \t]/g, ' ')
    .replace(/=\?UTF-8\?[BQ]\?[^?]*\?=(?:\s+=\?UTF-8\?[BQ]\?[^?]*\?=)*/gi, (run) =>
      Buffer.concat([...run.matchAll(encodedWord)].map(([, encoding, text]) => wordBytes(encoding, text))).toString(
        'utf8',
      ),
    );
}

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
