import { expect } from 'chai';
import type { Knex } from 'knex';

import {
  assertSendAllowed,
  maxSendsPerWindow,
  MessageRateLimited,
  sendWindowMs,
} from '../../lib/experience/verification/send-rate-limit.ts';
import {
  maxCodeAttempts,
  sendVerificationCode,
  verifyVerificationCode,
} from '../../lib/experience/verification/verification-codes.ts';
import { RequestError } from '../../lib/http/errors.ts';
import { type CodeIdentifier, recipientKey } from '../../lib/messages/codes.ts';
import { developmentConnector, listDevelopmentMessages } from '../../lib/messages/development.ts';
import type { Connectors } from '../../lib/messages/index.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { freshDatabaseUrl, testDatabase } from '../support/database.ts';

describe('verification codes and the send rate limit', () => {
  let url: string;
  let db: Knex;
  let connectors: Connectors;
  let counter = 0;
  const newEmail = (): CodeIdentifier => ({
    type: 'email',
    value: `user${++counter}_${Math.random().toString(36).slice(2, 8)}@example.com`,
  });

  async function rejection(promise: Promise<unknown>): Promise<RequestError> {
    try {
      await promise;
    } catch (error) {
      expect(error).to.be.instanceOf(RequestError);
      return error as RequestError;
    }
    expect.fail('expected a RequestError');
  }

  async function expectCodeError(promise: Promise<unknown>, code: string): Promise<void> {
    const error = await rejection(promise);
    expect(error.status).to.equal(400);
    expect(error.code).to.equal(code);
  }

  /** Sends a code and reads it back from the development store, as a user reads their inbox. */
  async function send(identifier: CodeIdentifier, purpose: 'SignIn' | 'Generic' = 'SignIn') {
    const sent = await sendVerificationCode(db, connectors, { identifier, purpose });
    const [message] = await listDevelopmentMessages(db, identifier.value);
    return { ...sent, code: message.code! };
  }

  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  before(async () => {
    url = await freshDatabaseUrl();
    db = openDatabase(url);
    await migrateToLatest(db);
    const development = developmentConnector(db);
    connectors = { email: development, phone: development };
  });
  after(() => db.destroy());

  describe('recipientKey', () => {
    it('lower-cases and trims emails, keeps only the digits of phones', () => {
      expect(recipientKey({ type: 'email', value: '  Jane.Doe@Example.COM ' })).to.equal('jane.doe@example.com');
      expect(recipientKey({ type: 'phone', value: '+1 (555) 010-9999' })).to.equal('15550109999');
    });
  });

  describe('sending', () => {
    it('delivers 6 digits through the connector and stores only a hash of them', async () => {
      const identifier = newEmail();
      const before = Date.now();
      const { codeId, expiresAt, code } = await send(identifier);
      expect(code).to.match(/^\d{6}$/);
      expect(expiresAt).to.be.within(before + 600_000, Date.now() + 600_000);

      const [message] = await listDevelopmentMessages(db, identifier.value);
      expect(message).to.include({ recipient: identifier.value, type: 'email', purpose: 'SignIn', code });

      const row = await db('verification_codes').where({ id: codeId }).first();
      expect(row).to.include({ recipient: identifier.value, purpose: 'SignIn' });
      expect(Number(row.attempts)).to.equal(0);
      expect(row.code_hash).to.match(/^[\da-f]{64}$/);
      expect(JSON.stringify(row)).not.to.include(code);
    });

    it('gives each send its own code id and code', async () => {
      const identifier = newEmail();
      const first = await send(identifier);
      const second = await send(identifier);
      expect(second.codeId).not.to.equal(first.codeId);
      const messages = await listDevelopmentMessages(db, identifier.value);
      expect(messages.map(({ code }) => code)).to.deep.equal([second.code, first.code]);
    });
  });

  describe('verifying', () => {
    it('accepts the right code once, then refuses it', async () => {
      const identifier = newEmail();
      const { codeId, code } = await send(identifier);
      expect(await verifyVerificationCode(db, { codeId, identifier, code })).to.deep.equal({
        codeId,
        purpose: 'SignIn',
      });
      expect(Number((await db('verification_codes').where({ id: codeId }).first()).verified_at)).to.be.above(0);
      await expectCodeError(verifyVerificationCode(db, { codeId, identifier, code }), 'verification_code.not_found');
    });

    it('refuses a wrong code with code_mismatch, and the right one still works', async () => {
      const identifier = newEmail();
      const { codeId, code } = await send(identifier);
      await expectCodeError(
        verifyVerificationCode(db, { codeId, identifier, code: wrong(code) }),
        'verification_code.code_mismatch',
      );
      await verifyVerificationCode(db, { codeId, identifier, code });
    });

    it(`kills a code after ${maxCodeAttempts} wrong tries, even for the right value`, async () => {
      const identifier = newEmail();
      const { codeId, code } = await send(identifier);
      for (let attempt = 0; attempt < maxCodeAttempts; attempt++) {
        await expectCodeError(
          verifyVerificationCode(db, { codeId, identifier, code: wrong(code) }),
          'verification_code.code_mismatch',
        );
      }
      await expectCodeError(
        verifyVerificationCode(db, { codeId, identifier, code }),
        'verification_code.exceed_max_try',
      );
    });

    it('spends one try per concurrent guess: no more comparisons than the limit', async () => {
      const identifier = newEmail();
      const { codeId, code } = await send(identifier);
      const guesses = Array.from({ length: maxCodeAttempts * 2 }, () =>
        rejection(verifyVerificationCode(db, { codeId, identifier, code: wrong(code) })),
      );
      const codes = (await Promise.all(guesses)).map((error) => error.code);
      expect(codes.filter((code) => code === 'verification_code.code_mismatch')).to.have.length(maxCodeAttempts);
      expect(codes.filter((code) => code === 'verification_code.exceed_max_try')).to.have.length(maxCodeAttempts);
    });

    it('refuses an expired code', async () => {
      const identifier = newEmail();
      const { codeId, code } = await send(identifier);
      await db('verification_codes')
        .where({ id: codeId })
        .update({ expires_at: Date.now() - 1 });
      await expectCodeError(verifyVerificationCode(db, { codeId, identifier, code }), 'verification_code.expired');
    });

    it("prunes a recipient's codes long expired when it sends, but keeps recent ones answering expired", async () => {
      const identifier = newEmail();
      const recent = await send(identifier);
      const old = await send(identifier);
      await db('verification_codes')
        .where({ id: recent.codeId })
        .update({ expires_at: Date.now() - 1000 });
      await db('verification_codes')
        .where({ id: old.codeId })
        .update({ expires_at: Date.now() - 600_001 });
      await send(identifier);
      expect(await db('verification_codes').where({ id: old.codeId }).first()).to.equal(undefined);
      await expectCodeError(verifyVerificationCode(db, { ...recent, identifier }), 'verification_code.expired');
    });

    it('answers not_found for an unknown id, another recipient, or another purpose', async () => {
      const identifier = newEmail();
      const { codeId, code } = await send(identifier);
      await expectCodeError(
        verifyVerificationCode(db, { codeId: 'nosuchcode', identifier, code }),
        'verification_code.not_found',
      );
      await expectCodeError(
        verifyVerificationCode(db, { codeId, identifier: newEmail(), code }),
        'verification_code.not_found',
      );
      await expectCodeError(
        verifyVerificationCode(db, { codeId, identifier, code, purpose: 'Register' }),
        'verification_code.not_found',
      );
      await verifyVerificationCode(db, { codeId, identifier, code, purpose: 'SignIn' });
    });

    it('without a code id, checks the newest unused code of the purpose', async () => {
      const identifier = newEmail();
      await expectCodeError(
        verifyVerificationCode(db, { identifier, code: '000000', purpose: 'Generic' }),
        'verification_code.not_found',
      );
      const older = await send(identifier, 'Generic');
      await new Promise((resolve) => setTimeout(resolve, 5));
      const newer = await send(identifier, 'Generic');
      await send(identifier, 'SignIn');
      if (older.code !== newer.code) {
        await expectCodeError(
          verifyVerificationCode(db, { identifier, code: older.code, purpose: 'Generic' }),
          'verification_code.code_mismatch',
        );
      }
      expect(await verifyVerificationCode(db, { identifier, code: newer.code, purpose: 'Generic' })).to.deep.equal({
        codeId: newer.codeId,
        purpose: 'Generic',
      });
    });

    it("treats email case and whitespace, and a phone's +, as the same recipient", async () => {
      const email = newEmail();
      const { codeId, code } = await send({ type: 'email', value: ` ${email.value.toUpperCase()} ` });
      await verifyVerificationCode(db, { codeId, identifier: email, code });

      const phone = { type: 'phone', value: `+1555${String(counter).padStart(7, '0')}` } as const;
      const sent = await send(phone);
      const [message] = await listDevelopmentMessages(db, phone.value.slice(1));
      expect(message).to.include({ recipient: phone.value.slice(1), type: 'phone', code: sent.code });
      await verifyVerificationCode(db, {
        codeId: sent.codeId,
        identifier: { type: 'phone', value: phone.value.slice(1) },
        code: sent.code,
      });
    });
  });

  describe('the send rate limit', () => {
    const sendsTo = (recipient: string) => db('message_sends').where({ recipient });

    it(`allows ${maxSendsPerWindow} sends per recipient, refuses the next with 429, and not others`, async () => {
      const identifier = newEmail();
      for (let sent = 0; sent < maxSendsPerWindow; sent++) {
        await sendVerificationCode(db, connectors, { identifier, purpose: 'SignIn' });
      }
      const error = await rejection(sendVerificationCode(db, connectors, { identifier, purpose: 'SignIn' }));
      expect(error).to.be.instanceOf(MessageRateLimited);
      expect(error).to.include({ status: 429, code: 'request.message_rate_limited', recipient: identifier.value });
      expect(error.message).to.equal('Too many messages sent to this recipient. Please try again later.');
      expect(await listDevelopmentMessages(db, identifier.value)).to.have.length(maxSendsPerWindow);
      expect(await sendsTo(identifier.value), 'a refused send is not recorded').to.have.length(maxSendsPerWindow);

      await sendVerificationCode(db, connectors, { identifier: newEmail(), purpose: 'SignIn' });
    });

    it('counts one recipient however its address is written', async () => {
      const identifier = newEmail();
      for (let sent = 0; sent < maxSendsPerWindow; sent++) {
        const value = sent % 2 ? identifier.value.toUpperCase() : `  ${identifier.value}`;
        await sendVerificationCode(db, connectors, { identifier: { type: 'email', value }, purpose: 'SignIn' });
      }
      await rejection(sendVerificationCode(db, connectors, { identifier, purpose: 'SignIn' }));

      const phone = `4477${String(counter).padStart(8, '0')}`;
      for (let sent = 0; sent < maxSendsPerWindow; sent++) {
        await sendVerificationCode(db, connectors, {
          identifier: { type: 'phone', value: sent % 2 ? `+${phone}` : phone },
          purpose: 'SignIn',
        });
      }
      const error = await rejection(
        sendVerificationCode(db, connectors, { identifier: { type: 'phone', value: `+${phone}` }, purpose: 'SignIn' }),
      );
      expect(error).to.include({ status: 429, recipient: phone });
    });

    it('allows sends again once the window has passed, and prunes what fell out of it', async () => {
      const identifier = newEmail();
      for (let sent = 0; sent < maxSendsPerWindow; sent++) {
        await sendVerificationCode(db, connectors, { identifier, purpose: 'SignIn' });
      }
      await rejection(sendVerificationCode(db, connectors, { identifier, purpose: 'SignIn' }));

      await sendsTo(identifier.value).update({ created_at: Date.now() - sendWindowMs - 1 });
      await sendVerificationCode(db, connectors, { identifier, purpose: 'SignIn' });
      expect(await sendsTo(identifier.value), 'only the new send is left').to.have.length(1);
    });

    it('slides: a send leaves the window 600 s after it was made', async () => {
      const recipient = newEmail().value;
      const now = Date.now();
      for (let sent = 0; sent < maxSendsPerWindow; sent++) {
        await assertSendAllowed(db, recipient, now - sendWindowMs + 1000 + sent);
      }
      await rejection(assertSendAllowed(db, recipient, now));
      await rejection(assertSendAllowed(db, recipient, now + 999));
      await assertSendAllowed(db, recipient, now + 1000);
    });

    it('takes a custom limit', async () => {
      const recipient = newEmail().value;
      const limit = { maxSends: 2, windowMs: 1000 };
      await assertSendAllowed(db, recipient, 10_000, limit);
      await assertSendAllowed(db, recipient, 10_001, limit);
      await rejection(assertSendAllowed(db, recipient, 10_500, limit));
      await assertSendAllowed(db, recipient, 11_000, limit);
    });

    it('lets only one of several concurrent sends take the last slot', async () => {
      const recipient = newEmail().value;
      const now = Date.now();
      for (let sent = 0; sent < maxSendsPerWindow - 1; sent++) {
        await assertSendAllowed(db, recipient, now - 1000);
      }
      // A second pool, as another instance would have. Not on SQLite: its driver is synchronous, so two
      // pools in one process would block each other's event loop (instances there are processes).
      const other = testDatabase === 'sqlite' ? db : openDatabase(url);
      try {
        const results = await Promise.allSettled(
          Array.from({ length: 6 }, (_, index) => assertSendAllowed(index % 2 ? other : db, recipient, now)),
        );
        expect(results.filter(({ status }) => status === 'fulfilled')).to.have.length(1);
        for (const result of results.filter((result) => result.status === 'rejected')) {
          expect(result.reason).to.be.instanceOf(MessageRateLimited);
        }
      } finally {
        if (other !== db) {
          await other.destroy();
        }
      }
      expect(await sendsTo(recipient)).to.have.length(maxSendsPerWindow);
    });
  });

  describe('a connector that fails', () => {
    it('answers 502 connector.general and leaves no code to verify', async () => {
      const identifier = newEmail();
      const failing: Connectors = {
        email: { send: () => Promise.reject(new Error('mail server said no')) },
        phone: connectors.phone,
      };
      const error = await rejection(sendVerificationCode(db, failing, { identifier, purpose: 'SignIn' }));
      expect(error).to.include({ status: 502, code: 'connector.general' });
      expect((error.cause as Error).message).to.equal('mail server said no');
      expect(await db('verification_codes').where({ recipient: identifier.value })).to.have.length(0);
    });
  });
});
