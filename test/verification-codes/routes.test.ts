import { expect } from 'chai';

import { expectError } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

type Message = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: string;
  code: string;
  createdAt: number;
};
type ErrorBody = { code: string; message: string };

describe('management API: verification codes and the development message store', () => {
  let service: TestService;
  let counter = 0;
  const newEmail = () => `${unique('user')}@example.com`;
  const newPhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${++counter % 10}`;

  const messagesTo = async (recipient: string) => {
    const response = await service.api.get<Message[]>('verification-messages', { searchParams: { recipient } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  };

  async function sendCode(body: Record<string, string>): Promise<string> {
    const response = await service.api.post('verification-codes', { json: body });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(204);
    const [message] = await messagesTo(Object.values(body)[0]);
    return message.code;
  }

  before(async () => {
    service = await startService();
  });
  after(() => ifSet(service)?.stop());

  describe('POST /api/verification-codes and /verify', () => {
    it('sends a Generic code to an email and verifies it once', async () => {
      const email = newEmail();
      const code = await sendCode({ email });
      expect(code).to.match(/^\d{6}$/);
      const [message] = await messagesTo(email);
      expect(message).to.include({ recipient: email, type: 'email', purpose: 'Generic', code });

      const verified = await service.api.post('verification-codes/verify', { json: { email, verificationCode: code } });
      expect(verified.statusCode, JSON.stringify(verified.body)).to.equal(204);
      expectError(
        await service.api.post('verification-codes/verify', { json: { email, verificationCode: code } }),
        400,
        'verification_code.not_found',
      );
    });

    it('sends to a phone with or without +, and reads it back either way', async () => {
      const phone = newPhone();
      const code = await sendCode({ phone: `+${phone}` });
      expect((await messagesTo(`+${phone}`))[0]).to.include({ recipient: phone, type: 'phone', code });
      const verified = await service.api.post('verification-codes/verify', { json: { phone, verificationCode: code } });
      expect(verified.statusCode, JSON.stringify(verified.body)).to.equal(204);
    });

    it('answers the 400s of verification: mismatch, not found', async () => {
      const email = newEmail();
      expectError(
        await service.api.post('verification-codes/verify', { json: { email, verificationCode: '123456' } }),
        400,
        'verification_code.not_found',
      );
      const code = await sendCode({ email: email.toUpperCase() });
      const wrong = code === '000000' ? '000001' : '000000';
      expectError(
        await service.api.post('verification-codes/verify', { json: { email, verificationCode: wrong } }),
        400,
        'verification_code.code_mismatch',
      );
      expect(
        (await service.api.post('verification-codes/verify', { json: { email, verificationCode: code } })).statusCode,
      ).to.equal(204);
    });

    it('validates bodies: one of email or phone, well-formed', async () => {
      for (const json of [
        {},
        { email: 'not-an-email' },
        { phone: '12' },
        { email: newEmail(), phone: newPhone() },
        { username: 'someone' },
      ]) {
        expectError(await service.api.post('verification-codes', { json }), 400, 'guard.invalid_input');
      }
      expectError(
        await service.api.post('verification-codes/verify', { json: { email: newEmail() } }),
        400,
        'guard.invalid_input',
      );
    });

    it('rate limits sends per recipient: the 11th within 600 s is 429', async () => {
      const email = newEmail();
      for (let sent = 0; sent < 10; sent++) {
        expect((await service.api.post('verification-codes', { json: { email } })).statusCode).to.equal(204);
      }
      const refused = await service.api.post<ErrorBody>('verification-codes', { json: { email } });
      expectError(refused, 429, 'request.message_rate_limited');
      expect(refused.body.message).to.equal('Too many messages sent to this recipient. Please try again later.');
      expect((await service.api.post('verification-codes', { json: { email: newEmail() } })).statusCode).to.equal(204);
    });

    it('needs a management token', async () => {
      expect((await service.http.post('api/verification-codes', { json: { email: newEmail() } })).statusCode).to.equal(
        401,
      );
      expect((await service.http.get('api/verification-messages')).statusCode).to.equal(401);
    });
  });

  describe('GET /api/verification-messages', () => {
    it("lists a recipient's messages newest first, and no one else's", async () => {
      const email = newEmail();
      const other = newEmail();
      const codes = [
        await sendCode({ email }),
        await sendCode({ email: other }),
        await sendCode({ email: email.toUpperCase() }),
      ];
      const messages = await messagesTo(email.toUpperCase());
      expect(messages.map(({ code }) => code)).to.deep.equal([codes[2], codes[0]]);
      expect(messages[0].createdAt).to.be.above(messages[1].createdAt);
      for (const message of messages) {
        expect(message).to.have.all.keys('id', 'recipient', 'type', 'purpose', 'code', 'createdAt');
        expect(message.recipient).to.equal(email);
      }
      const everyone = await service.api.get<Message[]>('verification-messages');
      expect(everyone.body.map(({ recipient }) => recipient)).to.include.members([email, other]);
    });

    it('is in the OpenAPI document outside production', async () => {
      const document = await service.http.get<{ paths: Record<string, unknown> }>('api/swagger.json');
      expect(document.body.paths).to.include.keys(
        '/api/verification-messages',
        '/api/verification-codes',
        '/api/verification-codes/verify',
      );
    });

    it('is 404 in production, and absent from the OpenAPI document', async () => {
      const production = await startService({ env: { NODE_ENV: 'production' } });
      try {
        expect((await production.api.get('verification-messages')).statusCode).to.equal(404);
        expect(
          (await production.api.get('verification-messages', { searchParams: { recipient: newEmail() } })).statusCode,
        ).to.equal(404);
        const document = await production.http.get<{ paths: Record<string, unknown> }>('api/swagger.json');
        expect(document.body.paths).not.to.have.key('/api/verification-messages');
        // Without SMTP_URL nothing can send it there (test/security/secrets-in-logs.test.ts).
        expect((await production.api.post('verification-codes', { json: { email: newEmail() } })).statusCode).to.equal(
          501,
        );
      } finally {
        await production.stop();
      }
    });
  });
});
