import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import type { Browser } from './browser.ts';
import { createSpa, messagesTo, newEmail, openExperience, sendCode } from './experience-helpers.ts';

const limited = 'request.message_rate_limited';
const sendsPerWindow = 10;

describe('experience API: verification-code send rate limit', () => {
  let service: TestService;
  let db: Knex;
  let app: { id: string };
  before(async () => {
    service = await startService();
    db = openDatabase(service.config.dbUrl);
    app = await createSpa(service);
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(service)?.stop();
  });

  async function sendMany(browser: Browser, addresses: string[]): Promise<void> {
    for (const [index, address] of addresses.entries()) {
      const response = await sendCode(browser, address, 'SignIn');
      expect(response.statusCode, `send ${index + 1} to ${address}: ${JSON.stringify(response.body)}`).to.equal(200);
    }
  }

  it('sends 10 codes to one recipient in the window; the 11th is refused with 429', async () => {
    const email = newEmail('busy');
    const browser = await openExperience(service, app.id);
    await sendMany(
      browser,
      Array.from({ length: sendsPerWindow }, () => email),
    );
    expect(await messagesTo(service, email)).to.have.length(sendsPerWindow);

    expectError(await sendCode(browser, email, 'SignIn'), 429, limited);
    // Also for another purpose, and from another interaction: the limit is the recipient's.
    expectError(await sendCode(browser, email, 'Register'), 429, limited);
    const other = await openExperience(service, app.id, 'Register');
    expectError(await sendCode(other, email, 'Register'), 429, limited);
    // Refused sends send nothing.
    expect(await messagesTo(service, email)).to.have.length(sendsPerWindow);
  });

  it('leaves other recipients unaffected', async () => {
    const busy = newEmail('busy');
    const quiet = newEmail('quiet');
    const browser = await openExperience(service, app.id);
    await sendMany(
      browser,
      Array.from({ length: sendsPerWindow }, () => busy),
    );
    expectError(await sendCode(browser, busy, 'SignIn'), 429, limited);

    expectStatus(await sendCode(browser, quiet, 'SignIn'), 200);
    expect(await messagesTo(service, quiet)).to.have.length(1);
  });

  it('counts one recipient whatever the case of the email address', async () => {
    const email = newEmail('Mixed.Case');
    const [local, domain] = email.split('@') as [string, string];
    const spellings = [
      email,
      email.toLowerCase(),
      email.toUpperCase(),
      `${local.toLowerCase()}@${domain.toUpperCase()}`,
    ];
    const browser = await openExperience(service, app.id);
    await sendMany(
      browser,
      Array.from({ length: sendsPerWindow }, (_, index) => spellings[index % spellings.length]),
    );
    for (const spelling of spellings) {
      expectError(await sendCode(browser, spelling, 'SignIn'), 429, limited);
    }
  });

  it('counts ForgotPassword sends to existing accounts, and refuses them the same way', async () => {
    const email = newEmail('resetter');
    expectStatus(
      await service.api.post('users', { json: { primaryEmail: email, password: 'Granite-Kestrel-64' } }),
      200,
    );
    const browser = await openExperience(service, app.id, 'ForgotPassword');
    for (let index = 0; index < sendsPerWindow; index++) {
      expectStatus(await sendCode(browser, email, 'ForgotPassword'), 200);
    }
    expectError(await sendCode(browser, email, 'ForgotPassword'), 429, limited);
  });

  it('applies the same limit to the management API send of the same recipient', async () => {
    const email = newEmail('shared');
    const browser = await openExperience(service, app.id);
    await sendMany(
      browser,
      Array.from({ length: sendsPerWindow }, () => email),
    );
    expectError(await service.api.post('verification-codes', { json: { email } }), 429, limited);
  });

  for (const [title, earlier] of [
    ['a recipient already sent to', 1],
    ['a recipient never sent to before', 0],
  ] as const) {
    it(`holds the limit against a burst of concurrent sends to ${title}`, async () => {
      const browsers = await Promise.all(Array.from({ length: 4 }, () => openExperience(service, app.id)));
      // A race shows only sometimes: a few rounds, each to a recipient of its own.
      for (let round = 0; round < 3; round++) {
        const email = newEmail('burst');
        await sendMany(
          browsers[0],
          Array.from({ length: earlier }, () => email),
        );
        const answers = await Promise.all(
          Array.from({ length: 16 }, (_, index) => sendCode(browsers[index % browsers.length], email, 'SignIn')),
        );
        const statuses = answers.map((answer) => answer.statusCode);
        expect(
          statuses.filter((status) => status === 200),
          `round ${round}: ${statuses.join(' ')}`,
        ).to.have.length(sendsPerWindow - earlier);
        expect(
          statuses.filter((status) => status === 429),
          `round ${round}: ${statuses.join(' ')}`,
        ).to.have.length(16 - sendsPerWindow + earlier);
        expect(await messagesTo(service, email)).to.have.length(sendsPerWindow);
      }
    });
  }

  it('allows sends again once the earlier ones leave the window', async () => {
    const email = newEmail('later');
    const browser = await openExperience(service, app.id);
    await sendMany(
      browser,
      Array.from({ length: sendsPerWindow }, () => email),
    );
    expectError(await sendCode(browser, email, 'SignIn'), 429, limited);

    // The window is 600 s: move the recorded sends 601 s into the past.
    await db('message_sends')
      .where({ recipient: email })
      .update({ created_at: db.raw('created_at - ?', [601_000]) });
    expectStatus(await sendCode(browser, email, 'SignIn'), 200);
  });
});
