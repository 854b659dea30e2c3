import { expect } from 'chai';

import { codePurposes } from '../../lib/messages/codes.ts';
import { smtpConnector } from '../../lib/messages/smtp.ts';
import { builtInLook } from '../support/email-look.ts';
import { freePort, startService, type TestService } from '../support/service.ts';
import { type SmtpTestServer, startSmtpServer, subjectOf } from '../support/smtp.ts';
import { ifSet } from '../support/values.ts';

/** No operator's template: the built-in emails. */
const noTemplates = { templates: () => Promise.resolve(undefined), look: () => Promise.resolve(builtInLook()) };

describe('the SMTP connector', () => {
  let smtp: SmtpTestServer;

  before(async () => {
    smtp = await startSmtpServer();
  });
  after(() => ifSet(smtp)?.stop());

  it('sends a plain-text and HTML email with the code, worded for each purpose', async () => {
    const connector = smtpConnector(
      {
        url: `smtp://mailer:secret@127.0.0.1:${smtp.port}`,
        from: 'Identity <no-reply@example.com>',
      },
      noTemplates,
    );
    const subjects = new Map<string, string | undefined>();
    for (const [index, purpose] of codePurposes.entries()) {
      const code = String(123_400 + index);
      await connector.send({ to: 'jane@example.com', type: 'email', purpose, code });
      const mail = smtp.received.at(-1)!;
      expect(mail).to.include({ from: 'no-reply@example.com', user: 'mailer' });
      expect(mail.to).to.deep.equal(['jane@example.com']);
      expect(mail.raw).to.include('Content-Type: text/plain').and.include('Content-Type: text/html');
      expect(mail.raw.split(code)).to.have.length.of.at.least(3, 'the code in both parts');
      expect(mail.raw).to.include('10 minutes');
      subjects.set(purpose, subjectOf(mail.raw));
    }
    expect(subjects.get('SignIn')).to.equal('Your sign-in code');
    expect(subjects.get('Register')).to.equal('Your registration code');
    expect(subjects.get('ForgotPassword')).to.equal('Your password reset code');
    expect(subjects.get('Generic')).to.equal('Your verification code');
  });

  it('rejects when the server cannot be reached', async () => {
    const connector = smtpConnector(
      { url: `smtp://127.0.0.1:${await freePort()}`, from: 'no-reply@example.com' },
      noTemplates,
    );
    let failed = false;
    await connector
      .send({ to: 'jane@example.com', type: 'email', purpose: 'SignIn', code: '123456' })
      .catch(() => (failed = true));
    expect(failed).to.equal(true);
  });

  describe('in the service, with SMTP_URL set', () => {
    let service: TestService;

    before(async () => {
      service = await startService({
        env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SMTP_FROM: 'Accounts <accounts@example.com>' },
      });
    });
    after(() => ifSet(service)?.stop());

    it('emails the code instead of storing it, and the emailed code verifies', async () => {
      const email = `smtp_${Date.now()}@example.com`;
      const response = await service.api.post('verification-codes', { json: { email } });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(204);
      const mail = smtp.received.find(({ to }) => to.includes(email))!;
      expect(mail.from).to.equal('accounts@example.com');
      const code = /^(\d{6})\r?$/m.exec(mail.raw)![1];
      expect(
        (await service.api.get('verification-messages', { searchParams: { recipient: email } })).body,
      ).to.deep.equal([]);

      const verified = await service.api.post('verification-codes/verify', { json: { email, verificationCode: code } });
      expect(verified.statusCode, JSON.stringify(verified.body)).to.equal(204);
    });

    it('keeps phone messages in the development store', async () => {
      const phone = `1555${String(Date.now() % 10_000_000).padStart(7, '0')}`;
      expect((await service.api.post('verification-codes', { json: { phone } })).statusCode).to.equal(204);
      expect(
        (await service.api.get('verification-messages', { searchParams: { recipient: phone } })).body,
      ).to.have.length(1);
    });
  });

  it('answers 502 connector.general when the mail server is down', async () => {
    const service = await startService({ env: { SMTP_URL: `smtp://127.0.0.1:${await freePort()}` } });
    try {
      const response = await service.api.post<{ code: string }>('verification-codes', {
        json: { email: 'down@example.com' },
      });
      expect(response.statusCode).to.equal(502);
      expect(response.body.code).to.equal('connector.general');
    } finally {
      await service.stop();
    }
  });
});
