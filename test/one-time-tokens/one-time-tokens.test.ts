import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import type { Browser } from '../experience/browser.ts';
import {
  createUser,
  identify,
  newEmail,
  openExperience,
  type SignInSetting,
  startSignInSetting,
  submitToApplication,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import type { TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

type Token = {
  id: string;
  email: string;
  token: string;
  context: Record<string, unknown>;
  status: string;
  expiresAt: number;
  createdAt: number;
};

/** Logto's one-time tokens: the management API, and magic-link sign-in through the Experience API. */
describe('one-time tokens (magic links, invitations)', () => {
  let setting: SignInSetting;
  let service: TestService;
  let spa: { id: string };
  let db: Knex;

  before(async () => {
    setting = await startSignInSetting();
    ({ service, spa } = setting);
    db = openDatabase(service.config.dbUrl);
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(setting)?.stop();
  });

  async function create(json: Record<string, unknown>): Promise<Token> {
    const response = await service.api.post<Token>('one-time-tokens', { json });
    expectStatus(response, 200);
    return response.body;
  }
  const get = async (id: string) => (await service.api.get<Token>(`one-time-tokens/${id}`)).body;
  const verify = (email: string, token: string) =>
    service.api.post<Token>('one-time-tokens/verify', { json: { email, token } });
  const setStatus = (id: string, status: string) =>
    service.api.put<Token>(`one-time-tokens/${id}/status`, { json: { status } });

  describe('the management API', () => {
    it('creates a token of 32 characters for ten minutes by default, or for expiresIn seconds, with its context', async () => {
      const email = newEmail('ott');
      const now = Date.now();
      const token = await create({ email });
      expect(token).to.include({ email, status: 'active' });
      expect(token.context).to.deep.equal({});
      expect(token.token).to.match(/^[\dA-Za-z]{32}$/);
      expect(token.expiresAt).to.be.within(now, now + 600_000 + 1000);

      const short = await create({
        email,
        expiresIn: 30,
        context: { jitOrganizationIds: ['org-1'], interactionEvent: 'ForgotPassword' },
      });
      expect(short.expiresAt).to.be.at.most(Date.now() + 30_000 + 1000);
      expect(short.context).to.deep.equal({ jitOrganizationIds: ['org-1'], interactionEvent: 'ForgotPassword' });
      expect(await get(short.id)).to.deep.equal(short);
    });

    it('finds a token by its SHA-256 digest (the value itself is sealed when SECRETS_ENCRYPTION_KEY is set)', async () => {
      const token = await create({ email: newEmail('sealed') });
      const row = await db('one_time_tokens').where({ id: token.id }).first();
      expect(row.token_digest).to.equal(createHash('sha256').update(token.token).digest('hex'));
    });

    it('spends a token once; a second use, a revoked, an expired or another email’s token is refused with Logto’s codes', async () => {
      const email = newEmail('spend');
      const token = await create({ email, context: { jitOrganizationIds: ['org-1'] } });
      const spent = await verify(email.toUpperCase(), token.token);
      expectStatus(spent, 200);
      expect(spent.body).to.deep.equal({ ...token, status: 'consumed' });
      expectError(await verify(email, token.token), 400, 'one_time_token.token_consumed');

      expectError(await verify(email, 'no-such-token'), 404, 'one_time_token.token_not_found');
      const other = await create({ email });
      expectError(await verify('someone-else@example.com', other.token), 400, 'one_time_token.email_mismatch');

      expectStatus(await setStatus(other.id, 'revoked'), 200);
      expect((await get(other.id)).status).to.equal('revoked');
      expectError(await verify(email, other.token), 400, 'one_time_token.token_revoked');
      expectError(await setStatus(other.id, 'active'), 400, 'one_time_token.cannot_reactivate_token');

      const brief = await create({ email, expiresIn: 1 });
      await sleep(1100);
      expect((await get(brief.id)).status).to.equal('expired');
      expectError(await verify(email, brief.token), 400, 'one_time_token.token_expired');
      const row = await db('one_time_tokens').where({ id: brief.id }).first();
      expect(row.status).to.equal('expired');
    });

    it('of twenty concurrent uses of one token, exactly one succeeds', async () => {
      const email = newEmail('race');
      const token = await create({ email });
      const answers = await Promise.all(Array.from({ length: 20 }, () => verify(email, token.token)));
      const statuses = answers.map((answer) => answer.statusCode);
      expect(statuses.filter((status) => status === 200)).to.have.length(1);
      for (const answer of answers.filter((one) => one.statusCode !== 200)) {
        expectError(answer, 400, 'one_time_token.token_consumed');
      }
      expect((await get(token.id)).status).to.equal('consumed');
    });

    it('lists by email and status, newest first, paged with Total-Number; marks expired ones when a new one is made', async () => {
      const email = newEmail('list');
      const brief = await create({ email, expiresIn: 1 });
      await sleep(1100);
      const [first, second, third] = [await create({ email }), await create({ email }), await create({ email })];
      expect((await db('one_time_tokens').where({ id: brief.id }).first()).status).to.equal('expired');

      const all = await service.api.get<Token[]>('one-time-tokens', { searchParams: { email } });
      expect(all.body.map(({ id }) => id)).to.have.members([brief.id, first.id, second.id, third.id]);
      const paged = await service.api.get<Token[]>('one-time-tokens', {
        searchParams: { email, page: 1, page_size: 2 },
      });
      expect(paged.headers['total-number']).to.equal('4');
      expect(paged.body.map(({ id }) => id)).to.have.members([second.id, third.id]);

      expectStatus(await setStatus(first.id, 'revoked'), 200);
      expectStatus(await verify(email, second.token), 200);
      const byStatus = async (status: string) =>
        (await service.api.get<Token[]>('one-time-tokens', { searchParams: { email, status } })).body.map(
          ({ id }) => id,
        );
      expect(await byStatus('revoked')).to.deep.equal([first.id]);
      expect(await byStatus('consumed')).to.deep.equal([second.id]);
      expect(await byStatus('active')).to.deep.equal([third.id]);
      expect(await byStatus('expired')).to.deep.equal([brief.id]);
    });

    it('answers 404 for a token that does not exist (entity.not_exists_with_id; entity.not_found on delete, as Logto)', async () => {
      expectError(await service.api.get('one-time-tokens/no-such-id'), 404, 'entity.not_exists_with_id');
      expectError(await service.api.delete('one-time-tokens/no-such-id'), 404, 'entity.not_found');
      const token = await create({ email: newEmail('gone') });
      expectStatus(await service.api.delete(`one-time-tokens/${token.id}`), 204);
      expectError(await service.api.get(`one-time-tokens/${token.id}`), 404, 'entity.not_exists_with_id');
    });
  });

  describe('the Experience API: verification/one-time-token/verify', () => {
    const verifyIn = (browser: Browser, email: string, token: string) =>
      browser.call('post', 'api/experience/verification/one-time-token/verify', {
        token,
        identifier: { type: 'email', value: email },
      });

    it('signs a person in by the link, even where email is not a sign-in method, and the token is spent', async () => {
      const email = newEmail('magic');
      const user = await createUser(service, {
        username: unique('magic'),
        primaryEmail: email,
        password: 'Granite-Kestrel-64',
      });
      const token = await create({ email });
      const browser = await openExperience(service, spa.id);
      const verified = await verifyIn(browser, email, token.token);
      expectStatus(verified, 200);
      expectStatus(await identify(browser, { verificationId: verified.body.verificationId }), 204);
      await submitToApplication(browser);
      expect((await get(token.id)).status).to.equal('consumed');
      expectError(
        await verifyIn(await openExperience(service, spa.id), email, token.token),
        400,
        'one_time_token.token_consumed',
      );
      const signedIn = await service.api.get(`users/${user.id}`);
      expect(signedIn.body.lastSignInAt).to.be.a('number');
    });

    it('registers a new person: sign-in first (user.user_not_exist), then Register with the same verification', async () => {
      const email = newEmail('newcomer');
      const token = await create({ email });
      const browser = await openExperience(service, spa.id);
      const verified = await verifyIn(browser, email, token.token);
      expectStatus(verified, 200);
      const { verificationId } = verified.body;
      expectError(await identify(browser, { verificationId }), 404, 'user.user_not_exist');
      expectStatus(
        await browser.call('put', 'api/experience/interaction-event', { interactionEvent: 'Register' }),
        204,
      );
      let registered = await identify(browser, { verificationId });
      // The sign-up settings may ask for more (a username, a password): the person gives it, then is registered.
      const given: Record<string, unknown> = { username: unique('newcomer'), password: 'Granite-Kestrel-64' };
      for (let round = 0; registered.statusCode === 422 && round < 3; round++) {
        expectError(registered, 422, 'user.missing_profile');
        for (const missing of registered.body.data.missingProfile as string[]) {
          const added = await browser.call('post', 'api/experience/profile', { type: missing, value: given[missing] });
          expectStatus(added, 204);
        }
        registered = await identify(browser);
      }
      expectStatus(registered, 201);
      await submitToApplication(browser);
      const users = await service.api.get('users', { searchParams: { 'search.primaryEmail': email } });
      expect(users.body.map((user: { primaryEmail: string }) => user.primaryEmail)).to.deep.equal([email]);
    });

    it('refuses a token made for another kind of interaction, and leaves it unspent', async () => {
      const email = newEmail('reset');
      await createUser(service, { primaryEmail: email, password: 'Granite-Kestrel-64' });
      const token = await create({ email, context: { interactionEvent: 'ForgotPassword' } });
      expectError(
        await verifyIn(await openExperience(service, spa.id), email, token.token),
        400,
        'one_time_token.interaction_event_mismatch',
      );
      expect((await get(token.id)).status).to.equal('active');
    });

    it('an invitation: the person joins the token’s organizations once signed in', async () => {
      const organization = await service.api.post('organizations', { json: { name: unique('invited') } });
      expectStatus(organization, 201);
      const email = newEmail('invitee');
      const user = await createUser(service, {
        username: unique('invitee'),
        primaryEmail: email,
        password: 'Granite-Kestrel-64',
      });
      const token = await create({ email, context: { jitOrganizationIds: [organization.body.id, 'gone-org'] } });
      const browser = await openExperience(service, spa.id);
      const verified = await verifyIn(browser, email, token.token);
      expectStatus(await identify(browser, { verificationId: verified.body.verificationId }), 204);
      await submitToApplication(browser);
      const organizations = await service.api.get(`users/${user.id}/organizations`);
      expect(organizations.body.map(({ id }: { id: string }) => id)).to.deep.equal([organization.body.id]);
    });
  });
});
