import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

type UserProfile = Record<string, unknown>;
type User = {
  id: string;
  username: string | null;
  primaryEmail: string | null;
  primaryPhone: string | null;
  name: string | null;
  avatar: string | null;
  customData: Record<string, unknown>;
  identities: Record<string, { userId: string; details?: Record<string, unknown> }>;
  lastSignInAt: number | null;
  createdAt: number;
  updatedAt: number;
  profile: UserProfile;
  applicationId: string | null;
  isSuspended: boolean;
  hasPassword: boolean;
};
type Role = { id: string; name: string; type: 'User' | 'MachineToMachine'; isDefault: boolean };
type ErrorBody = { code: string; message: string; data?: unknown };
type PasswordRejected = ErrorBody & {
  data: { issues: Array<{ code: string; interpolation?: Record<string, unknown> }> };
};

/** Logto's user shape, exactly: no password digest or algorithm is ever shown. */
const userKeys = [
  'id',
  'username',
  'primaryEmail',
  'primaryPhone',
  'name',
  'avatar',
  'customData',
  'identities',
  'lastSignInAt',
  'createdAt',
  'updatedAt',
  'profile',
  'applicationId',
  'isSuspended',
  'hasPassword',
];

const goodPassword = 'Tr0ub4dor&3x';
const otherGoodPassword = 'Qw9!zKp#4mLx';

describe('management API: users', () => {
  let service: TestService;
  /** A second connection to the service's database, to plant and count sessions and tokens. */
  let db: Knex;
  let counter = 0;
  /** Unique per call and valid as a username: a letter first, then letters, digits and _. */
  /** A phone number (E.164 digits) no other test uses. */
  const uniquePhone = () => `1555${String(++counter).padStart(7, '0')}`;

  const expectNoSecrets = (user: unknown) => {
    const keys = Object.keys(user as object).filter((key) => key !== 'hasPassword');
    expect(keys.filter((key) => /password|digest|algorithm/i.test(key))).to.deep.equal([]);
    expect(JSON.stringify(user)).not.to.match(/argon2/i);
  };

  async function createUser(body: Record<string, unknown> = {}): Promise<User> {
    const response = await service.api.post<User>('users', { json: { username: unique('user'), ...body } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  async function createRole(body: Record<string, unknown> = {}): Promise<Role> {
    const response = await service.api.post<Role>('roles', {
      json: { name: unique('role'), description: 'A role made by a test.', ...body },
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  const getUser = (id: string) => service.api.get<User>(`users/${id}`);
  const listIds = async (searchParams: Record<string, string | number>) =>
    (await service.api.get<User[]>('users', { searchParams })).body.map(({ id }) => id);
  const roleIdsOf = async (userId: string) =>
    (await service.api.get<Role[]>(`users/${userId}/roles`)).body.map(({ id }) => id);

  /** What oidc-provider would store for a signed-in user: a session, a grant and a refresh token. */
  async function plantSessions(accountId: string): Promise<void> {
    const expiresAt = Date.now() + 3_600_000;
    const rows = ['Session', 'Grant', 'RefreshToken'].map((model) => ({
      model_name: model,
      id: unique(model),
      payload: JSON.stringify({ kind: model, accountId, exp: Math.floor(expiresAt / 1000) }),
      expires_at: expiresAt,
      account_id: accountId,
    }));
    await db('oidc_model_instances').insert(rows);
  }

  const sessionModelsOf = async (accountId: string) =>
    ((await db('oidc_model_instances').where({ account_id: accountId }).pluck('model_name')) as string[]).sort();

  before(async () => {
    service = await startService();
    db = openDatabase(service.config.dbUrl);
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(service)?.stop();
  });

  describe('POST /api/users', () => {
    it('creates a user in Logto’s User shape, without any password field', async () => {
      const username = unique('alice');
      const primaryEmail = `${username}@example.com`;
      const primaryPhone = uniquePhone();
      const before = Date.now();
      const response = await service.api.post<User>('users', {
        json: {
          username,
          primaryEmail,
          primaryPhone,
          name: 'Alice Liddell',
          avatar: 'https://example.com/alice.png',
          customData: { plan: 'gold', nested: { a: 1 } },
          profile: { givenName: 'Alice', familyName: 'Liddell', address: { country: 'UK' } },
        },
      });

      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      const user = response.body;
      expect(user).to.have.all.keys(...userKeys);
      expect(user).to.deep.include({
        username,
        primaryEmail,
        primaryPhone,
        name: 'Alice Liddell',
        avatar: 'https://example.com/alice.png',
        customData: { plan: 'gold', nested: { a: 1 } },
        identities: {},
        lastSignInAt: null,
        profile: { givenName: 'Alice', familyName: 'Liddell', address: { country: 'UK' } },
        applicationId: null,
        isSuspended: false,
        hasPassword: false,
      });
      expect(user.id).to.be.a('string').and.not.equal('');
      expect(user.createdAt)
        .to.be.a('number')
        .within(before - 1000, Date.now() + 1000);
      expect(user.updatedAt).to.be.a('number').at.least(user.createdAt);
      expectNoSecrets(user);

      const found = await getUser(user.id);
      expect(found.statusCode).to.equal(200);
      expect(found.body).to.deep.equal(user);
    });

    it('creates a user from nothing but defaults', async () => {
      const response = await service.api.post<User>('users', { json: {} });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      expect(response.body).to.have.all.keys(...userKeys);
      expect(response.body).to.deep.include({
        username: null,
        primaryEmail: null,
        primaryPhone: null,
        name: null,
        avatar: null,
        customData: {},
        identities: {},
        profile: {},
        hasPassword: false,
        isSuspended: false,
      });
    });

    it('stores a phone number given with a leading + as digits', async () => {
      const digits = uniquePhone();
      const user = await createUser({ primaryPhone: `+${digits}` });
      expect(user.primaryPhone).to.equal(digits);
    });

    it('with a password that meets the policy: hasPassword is true and the password verifies', async () => {
      const user = await createUser({ password: goodPassword });
      expect(user.hasPassword).to.equal(true);
      expectNoSecrets(user);
      expectNoSecrets((await getUser(user.id)).body);

      const verified = await service.api.post(`users/${user.id}/password/verify`, { json: { password: goodPassword } });
      expect(verified.statusCode, JSON.stringify(verified.body)).to.equal(204);
      expect(verified.body).to.equal('');

      expectError(
        await service.api.post(`users/${user.id}/password/verify`, { json: { password: otherGoodPassword } }),
        422,
        'session.invalid_credentials',
      );
    });

    describe('refuses invalid input with 400 guard.invalid_input', () => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ['a username with a space', { username: 'bad name' }],
        ['a username starting with a digit', { username: '1alice' }],
        ['a username with a hyphen', { username: 'al-ice' }],
        ['a username with a non-ASCII letter', { username: 'ålice' }],
        ['an email without @', { primaryEmail: 'not-an-email' }],
        ['an email without a local part', { primaryEmail: '@example.com' }],
        ['a phone with letters', { primaryPhone: '1555abc1234' }],
        ['a phone with separators', { primaryPhone: '+1-555-123-4567' }],
        ['a phone that is too short', { primaryPhone: '123' }],
        ['an unknown field', { username: 'valid_name', nickname: 'x' }],
        ['a numeric username', { username: 12345 }],
        ['a numeric name', { name: 42 }],
        ['customData that is an array', { customData: [1, 2] }],
        ['customData that is a string', { customData: 'gold' }],
        ['a profile with an unknown field', { profile: { shoeSize: '42' } }],
        ['a profile field of the wrong type', { profile: { givenName: 7 } }],
        ['an avatar that is not a URL', { avatar: 'not a url' }],
        ['an empty password', { password: '' }],
      ];
      for (const [label, body] of cases) {
        it(label, async () => {
          expectError(await service.api.post('users', { json: body }), 400, 'guard.invalid_input');
        });
      }

      it('and creates nothing', async () => {
        const username = unique('never');
        expectError(
          await service.api.post('users', { json: { username, primaryEmail: 'nope' } }),
          400,
          'guard.invalid_input',
        );
        expect(await listIds({ search: username })).to.deep.equal([]);
      });
    });

    describe('uniqueness', () => {
      it('refuses a username in use with 422 user.username_already_in_use', async () => {
        const taken = await createUser();
        expectError(
          await service.api.post('users', { json: { username: taken.username } }),
          422,
          'user.username_already_in_use',
        );
      });

      it('refuses an email in use with 422 user.email_already_in_use, whatever its case', async () => {
        const local = unique('alice');
        await createUser({ primaryEmail: `${local}@example.com` });

        expectError(
          await service.api.post('users', { json: { primaryEmail: `${local}@example.com` } }),
          422,
          'user.email_already_in_use',
        );
        const upper = `${local[0].toUpperCase()}${local.slice(1)}@Example.com`;
        expectError(
          await service.api.post('users', { json: { primaryEmail: upper } }),
          422,
          'user.email_already_in_use',
        );
        expectError(
          await service.api.post('users', { json: { primaryEmail: `${local}@example.com`.toUpperCase() } }),
          422,
          'user.email_already_in_use',
        );
      });

      it('refuses a lower-case email when a mixed-case one is in use (Alice@Example.com vs alice@example.com)', async () => {
        const local = unique('Alice');
        const created = await createUser({ primaryEmail: `${local}@Example.com` });
        expect(created.primaryEmail).to.equal(`${local}@Example.com`);
        expectError(
          await service.api.post('users', { json: { primaryEmail: `${local.toLowerCase()}@example.com` } }),
          422,
          'user.email_already_in_use',
        );
      });

      it('refuses a phone in use with 422 user.phone_already_in_use, with or without the +', async () => {
        const phone = uniquePhone();
        await createUser({ primaryPhone: phone });
        expectError(
          await service.api.post('users', { json: { primaryPhone: phone } }),
          422,
          'user.phone_already_in_use',
        );
        expectError(
          await service.api.post('users', { json: { primaryPhone: `+${phone}` } }),
          422,
          'user.phone_already_in_use',
        );
      });

      it('refuses taken identifiers on PATCH with the same codes, and changes nothing', async () => {
        const local = unique('Bob');
        const phone = uniquePhone();
        const holder = await createUser({ primaryEmail: `${local}@Example.com`, primaryPhone: phone });
        const user = await createUser({ name: 'Unchanged' });

        expectError(
          await service.api.patch(`users/${user.id}`, { json: { username: holder.username } }),
          422,
          'user.username_already_in_use',
        );
        expectError(
          await service.api.patch(`users/${user.id}`, { json: { primaryEmail: `${local.toLowerCase()}@example.com` } }),
          422,
          'user.email_already_in_use',
        );
        expectError(
          await service.api.patch(`users/${user.id}`, { json: { primaryEmail: `${local}@EXAMPLE.COM`.toUpperCase() } }),
          422,
          'user.email_already_in_use',
        );
        expectError(
          await service.api.patch(`users/${user.id}`, { json: { primaryPhone: `+${phone}` } }),
          422,
          'user.phone_already_in_use',
        );
        expectError(
          await service.api.patch(`users/${user.id}`, { json: { name: 'Changed', primaryPhone: phone } }),
          422,
          'user.phone_already_in_use',
        );

        expect((await getUser(user.id)).body).to.deep.equal(user);
      });

      it('creates one user when the same identifiers are sent at once; the others get a 422, never a 500', async () => {
        const username = unique('racer');
        const responses = await Promise.all(
          Array.from({ length: 6 }, () =>
            service.api.post<User | ErrorBody>('users', {
              json: { username, primaryEmail: `${username}@example.com` },
            }),
          ),
        );
        const statuses = responses.map(({ statusCode }) => statusCode).sort();
        expect(statuses, JSON.stringify(responses.map(({ body }) => body))).to.deep.equal([
          200, 422, 422, 422, 422, 422,
        ]);
        expect(await listIds({ search: username })).to.have.length(1);
      });

      it('lets a user keep or re-case their own identifiers on PATCH', async () => {
        const local = unique('carol');
        const phone = uniquePhone();
        const user = await createUser({ primaryEmail: `${local}@example.com`, primaryPhone: phone });

        const response = await service.api.patch<User>(`users/${user.id}`, {
          json: { username: user.username, primaryEmail: `${local}@EXAMPLE.com`, primaryPhone: phone },
        });
        expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
        expect(response.body).to.include({
          username: user.username,
          primaryEmail: `${local}@EXAMPLE.com`,
          primaryPhone: phone,
        });
      });

      it('frees an identifier once its holder lets go of it', async () => {
        const local = unique('dave');
        const holder = await createUser({ primaryEmail: `${local}@example.com` });
        const cleared = await service.api.patch<User>(`users/${holder.id}`, {
          json: { primaryEmail: null, username: null },
        });
        expect(cleared.statusCode).to.equal(200);
        expect(cleared.body).to.include({ primaryEmail: null, username: null });

        const user = await createUser({
          username: holder.username,
          primaryEmail: `${local.toUpperCase()}@example.com`,
        });
        expect(user.primaryEmail).to.equal(`${local.toUpperCase()}@example.com`);
      });
    });

    describe('password policy', () => {
      const rejection = (response: HttpResponse) => {
        expectError(response, 422, 'password.rejected');
        return (response.body as PasswordRejected).data.issues;
      };

      it('refuses a short password with password_rejected.too_short, and creates nothing', async () => {
        const username = unique('shorty');
        const issues = rejection(await service.api.post('users', { json: { username, password: 'Q9!zx' } }));
        expect(issues).to.deep.include({ code: 'password_rejected.too_short', interpolation: { min: 8 } });
        expect(await listIds({ search: username })).to.deep.equal([]);
      });

      it('refuses a password made of the username with password_rejected.restricted.user_info', async () => {
        const username = unique('marigold');
        const issues = rejection(
          await service.api.post('users', { json: { username, password: `Q9${username.toUpperCase()}` } }),
        );
        expect(issues.map(({ code }) => code)).to.include('password_rejected.restricted.user_info');
        expect(await listIds({ search: username })).to.deep.equal([]);
      });

      it('refuses a password made of the email’s local part or the name', async () => {
        const local = unique('zinnia');
        const byEmail = rejection(
          await service.api.post('users', { json: { primaryEmail: `${local}@example.com`, password: `Q9${local}` } }),
        );
        expect(byEmail.map(({ code }) => code)).to.include('password_rejected.restricted.user_info');

        const byName = rejection(
          await service.api.post('users', { json: { name: 'Penelope Garcia', password: 'Q9penelopegarcia' } }),
        );
        expect(byName.map(({ code }) => code)).to.include('password_rejected.restricted.user_info');
      });

      for (const [label, password, codes] of [
        ['repeated characters', 'aaaaaaa1', ['password_rejected.restricted.repetition']],
        ['sequences', 'abcd4321', ['password_rejected.restricted.sequence']],
        ['a keyboard row', 'qwertyu!', ['password_rejected.restricted.sequence']],
        [
          'repetitions and sequences together',
          'zzzz6789',
          ['password_rejected.restricted.repetition', 'password_rejected.restricted.sequence'],
        ],
      ] as const) {
        it(`refuses a password made of ${label} (all but three characters or fewer: Logto's rule)`, async () => {
          const issues = rejection(await service.api.post('users', { json: { password } }));
          expect(issues.map(({ code }) => code)).to.have.members([...codes]);
        });
      }

      it('accepts what Logto accepts: a run of three among other characters', async () => {
        for (const password of ['Xq9!aaa#Lm', 'Xq9!abc#Lm', 'pwd_abc12345-def']) {
          expectStatus(await service.api.post('users', { json: { password } }), 200);
        }
      });

      it('refuses characters outside letters, digits and keyboard symbols', async () => {
        const issues = rejection(await service.api.post('users', { json: { password: 'Pässwort-9x' } }));
        expect(issues.map(({ code }) => code)).to.deep.equal(['password_rejected.unsupported_characters']);
      });

      it('lists every reason at once', async () => {
        const issues = rejection(await service.api.post('users', { json: { password: 'aaa' } }));
        expect(issues.map(({ code }) => code)).to.include.members([
          'password_rejected.too_short',
          'password_rejected.restricted.repetition',
        ]);
      });
    });
  });

  describe('passwords of an existing user', () => {
    it('PATCH /users/:id/password sets a password (200, the user) that then verifies', async () => {
      const user = await createUser();
      expect((await service.api.get(`users/${user.id}/has-password`)).body).to.deep.equal({ hasPassword: false });
      expectError(
        await service.api.post(`users/${user.id}/password/verify`, { json: { password: goodPassword } }),
        422,
        'session.invalid_credentials',
      );

      const response = await service.api.patch<User>(`users/${user.id}/password`, { json: { password: goodPassword } });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      expect(response.body).to.have.all.keys(...userKeys);
      expect(response.body).to.include({ id: user.id, hasPassword: true });
      expectNoSecrets(response.body);

      const hasPassword = await service.api.get(`users/${user.id}/has-password`);
      expect(hasPassword.statusCode).to.equal(200);
      expect(hasPassword.body).to.deep.equal({ hasPassword: true });
      expect(
        (await service.api.post(`users/${user.id}/password/verify`, { json: { password: goodPassword } })).statusCode,
      ).to.equal(204);
    });

    it('PATCH /users/:id/password replaces the old password', async () => {
      const user = await createUser({ password: goodPassword });
      expect(
        (await service.api.patch(`users/${user.id}/password`, { json: { password: otherGoodPassword } })).statusCode,
      ).to.equal(200);

      expect(
        (await service.api.post(`users/${user.id}/password/verify`, { json: { password: otherGoodPassword } }))
          .statusCode,
      ).to.equal(204);
      expectError(
        await service.api.post(`users/${user.id}/password/verify`, { json: { password: goodPassword } }),
        422,
        'session.invalid_credentials',
      );
    });

    it('PATCH /users/:id/password applies the policy with the user’s own details, keeping the old password', async () => {
      const user = await createUser({ name: 'Rosalind Franklin', password: goodPassword });

      const short = await service.api.patch<PasswordRejected>(`users/${user.id}/password`, {
        json: { password: 'Q9!z' },
      });
      expectError(short, 422, 'password.rejected');
      expect(short.body.data.issues.map(({ code }) => code)).to.include('password_rejected.too_short');

      const byName = await service.api.patch<PasswordRejected>(`users/${user.id}/password`, {
        json: { password: 'Q9rosalind' },
      });
      expectError(byName, 422, 'password.rejected');
      expect(byName.body.data.issues.map(({ code }) => code)).to.deep.equal(['password_rejected.restricted.user_info']);

      const byUsername = await service.api.patch<PasswordRejected>(`users/${user.id}/password`, {
        json: { password: `Q9${user.username}` },
      });
      expectError(byUsername, 422, 'password.rejected');
      expect(byUsername.body.data.issues.map(({ code }) => code)).to.include('password_rejected.restricted.user_info');

      const sequence = await service.api.patch<PasswordRejected>(`users/${user.id}/password`, {
        json: { password: 'Xqabcdefg' },
      });
      expectError(sequence, 422, 'password.rejected');
      expect(sequence.body.data.issues.map(({ code }) => code)).to.deep.equal([
        'password_rejected.restricted.sequence',
      ]);

      expect(
        (await service.api.post(`users/${user.id}/password/verify`, { json: { password: goodPassword } })).statusCode,
      ).to.equal(204);
    });

    it('answers 404 for the password routes of an unknown user', async () => {
      expectError(
        await service.api.patch('users/no-such-user/password', { json: { password: goodPassword } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(
        await service.api.post('users/no-such-user/password/verify', { json: { password: goodPassword } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await service.api.get('users/no-such-user/has-password'), 404, 'entity.not_exists_with_id');
    });
  });

  describe('GET /api/users', () => {
    it('lists users with Total-Number, never showing a password digest', async () => {
      await createUser({ password: goodPassword });
      const response = await service.api.get<User[]>('users');
      expect(response.statusCode).to.equal(200);
      expect(response.body.length).to.be.at.least(1);
      expect(response.headers['total-number']).to.equal(String(response.body.length));
      for (const user of response.body) {
        expect(user).to.have.all.keys(...userKeys);
        expectNoSecrets(user);
      }
      expect(response.body.some(({ hasPassword }) => hasPassword)).to.equal(true);
    });

    it('pages with page and page_size; Total-Number counts them all', async () => {
      const marker = unique('pager');
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) {
        ids.push((await createUser({ name: `${marker} ${index}` })).id);
      }

      const pages: string[][] = [];
      for (const page of [1, 2, 3]) {
        const response = await service.api.get<User[]>('users', {
          searchParams: { search: `%${marker}%`, page, page_size: 2 },
        });
        expect(response.statusCode).to.equal(200);
        expect(response.headers['total-number']).to.equal('5');
        pages.push(response.body.map(({ id }) => id));
      }
      expect(pages.map((page) => page.length)).to.deep.equal([2, 2, 1]);
      expect(pages.flat()).to.have.members(ids);

      const beyond = await service.api.get<User[]>('users', {
        searchParams: { search: `%${marker}%`, page: 4, page_size: 2 },
      });
      expect(beyond.body).to.deep.equal([]);
      expect(beyond.headers['total-number']).to.equal('5');
    });

    it('refuses a bad page or page_size with 400', async () => {
      expectError(await service.api.get('users', { searchParams: { page: 0 } }), 400, 'guard.invalid_input');
      expectError(await service.api.get('users', { searchParams: { page_size: 'lots' } }), 400, 'guard.invalid_input');
    });

    it('searches username, email, phone and name with a LIKE pattern, whatever the case', async () => {
      const marker = `Qx${Math.random().toString(36).slice(2, 8)}`;
      const phone = `1777${String(++counter).padStart(7, '0')}`;
      const byUsername = await createUser({ username: `${marker}_user` });
      const byEmail = await createUser({ primaryEmail: `someone.${marker}@example.com` });
      const byName = await createUser({ name: `Mr ${marker.toUpperCase()} Smith` });
      const byPhone = await createUser({ primaryPhone: phone });
      await createUser({ name: 'Nobody at all' });

      const response = await service.api.get<User[]>('users', {
        searchParams: { search: `%${marker.toLowerCase()}%` },
      });
      expect(response.statusCode).to.equal(200);
      expect(response.body.map(({ id }) => id)).to.have.members([byUsername.id, byEmail.id, byName.id]);
      expect(response.headers['total-number']).to.equal('3');

      expect(await listIds({ search: `%${marker.toUpperCase()}%` })).to.have.members([
        byUsername.id,
        byEmail.id,
        byName.id,
      ]);
      expect(await listIds({ search: `%${phone.slice(2)}` })).to.deep.equal([byPhone.id]);
      expect(await listIds({ search: `someone.${marker}@EXAMPLE%` })).to.deep.equal([byEmail.id]);
      // Without wildcards, the whole value must match (Logto's `like`).
      expect(await listIds({ search: `someone.${marker}@EXAMPLE` })).to.deep.equal([]);
    });

    it('reads % and _ in a search as wildcards, \\% and \\_ as the plain characters', async () => {
      const marker = unique('lit');
      const plain = await createUser({ name: `${marker} 100 percent` });
      const percent = await createUser({ name: `${marker} 100% sure` });

      expect(await listIds({ search: `%${marker} 100\\%%` })).to.deep.equal([percent.id]);
      expect(await listIds({ search: `%${marker} 100\\_%` })).to.deep.equal([]);
      expect(await listIds({ search: `%${marker} 100_%` })).to.have.members([plain.id, percent.id]);
      expect(await listIds({ search: `${marker}%` })).to.have.members([plain.id, percent.id]);
    });

    it('leaves out the holders of a role with ?excludeRoleId=', async () => {
      const marker = unique('excl');
      const role = await createRole();
      const holder = await createUser({ name: `${marker} holder` });
      const other = await createUser({ name: `${marker} other` });
      const assigned = await service.api.post(`users/${holder.id}/roles`, { json: { roleIds: [role.id] } });
      expect(assigned.statusCode, JSON.stringify(assigned.body)).to.equal(201);

      const response = await service.api.get<User[]>('users', {
        searchParams: { search: `${marker}%`, excludeRoleId: role.id },
      });
      expect(response.statusCode).to.equal(200);
      expect(response.body.map(({ id }) => id)).to.deep.equal([other.id]);
      expect(response.headers['total-number']).to.equal('1');
      expect(await listIds({ search: `${marker}%` })).to.have.members([holder.id, other.id]);
    });
  });

  describe('GET /api/users/:id', () => {
    it('answers 404 entity.not_exists_with_id for an unknown user', async () => {
      expectError(await getUser('no-such-user'), 404, 'entity.not_exists_with_id');
    });
  });

  describe('PATCH /api/users/:id', () => {
    it('updates identifiers, name, avatar and profile; customData is replaced', async () => {
      const user = await createUser({
        name: 'Old Name',
        avatar: 'https://example.com/old.png',
        customData: { keep: false, drop: 'me' },
        profile: { nickname: 'old' },
      });
      const username = unique('renamed');
      const primaryEmail = `${username}@example.org`;
      const primaryPhone = uniquePhone();

      const response = await service.api.patch<User>(`users/${user.id}`, {
        json: {
          username,
          primaryEmail,
          primaryPhone,
          name: 'New Name',
          avatar: 'https://example.com/new.png',
          customData: { fresh: true },
          profile: { givenName: 'New', website: 'https://example.com' },
        },
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      const expected = {
        ...user,
        username,
        primaryEmail,
        primaryPhone,
        name: 'New Name',
        avatar: 'https://example.com/new.png',
        customData: { fresh: true },
        profile: { givenName: 'New', website: 'https://example.com' },
      };
      expect({ ...response.body, updatedAt: 0 }).to.deep.equal({ ...expected, updatedAt: 0 });
      expect(response.body.updatedAt).to.be.at.least(user.updatedAt);
      expect((await getUser(user.id)).body).to.deep.equal(response.body);
    });

    it('clears name, avatar and identifiers with null, and leaves out fields untouched', async () => {
      const user = await createUser({
        primaryEmail: `${unique('erin')}@example.com`,
        primaryPhone: uniquePhone(),
        name: 'Erin',
        avatar: 'https://example.com/erin.png',
        customData: { a: 1 },
        profile: { nickname: 'E' },
      });

      const response = await service.api.patch<User>(`users/${user.id}`, {
        json: { name: null, avatar: null, primaryEmail: null, primaryPhone: null },
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      expect(response.body).to.deep.include({
        username: user.username,
        name: null,
        avatar: null,
        primaryEmail: null,
        primaryPhone: null,
        customData: { a: 1 },
        profile: { nickname: 'E' },
      });
    });

    it('refuses bad input with 400 and unknown users with 404', async () => {
      const user = await createUser();
      expectError(
        await service.api.patch(`users/${user.id}`, { json: { username: 'no spaces' } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch(`users/${user.id}`, { json: { primaryEmail: 'nope' } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch(`users/${user.id}`, { json: { customData: 'x' } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch(`users/${user.id}`, { json: { isSuspended: true } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch(`users/${user.id}`, { json: { password: goodPassword } }),
        400,
        'guard.invalid_input',
      );
      expect((await getUser(user.id)).body).to.deep.equal(user);

      expectError(
        await service.api.patch('users/no-such-user', { json: { name: 'x' } }),
        404,
        'entity.not_exists_with_id',
      );
    });
  });

  describe('custom data and profile', () => {
    it('PATCH /custom-data merges keys and answers with the custom data; GET /custom-data reads it', async () => {
      const user = await createUser({ customData: { a: 1, b: { deep: true } } });

      const response = await service.api.patch(`users/${user.id}/custom-data`, {
        json: { customData: { b: 'replaced', c: [1, 2] } },
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      expect(response.body).to.deep.equal({ a: 1, b: 'replaced', c: [1, 2] });

      const read = await service.api.get(`users/${user.id}/custom-data`);
      expect(read.statusCode).to.equal(200);
      expect(read.body).to.deep.equal({ a: 1, b: 'replaced', c: [1, 2] });
      expect((await getUser(user.id)).body.customData).to.deep.equal({ a: 1, b: 'replaced', c: [1, 2] });
    });

    it('custom data routes answer 400 for a non-object and 404 for an unknown user', async () => {
      const user = await createUser();
      expectError(
        await service.api.patch(`users/${user.id}/custom-data`, { json: { customData: [1] } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch(`users/${user.id}/custom-data`, { json: { a: 1 } }),
        400,
        'guard.invalid_input',
      );
      expectError(await service.api.get('users/no-such-user/custom-data'), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.patch('users/no-such-user/custom-data', { json: { customData: {} } }),
        404,
        'entity.not_exists_with_id',
      );
    });

    it('PATCH /profile merges fields and answers with the profile', async () => {
      const user = await createUser({ profile: { givenName: 'Ada', nickname: 'A', address: { country: 'UK' } } });

      const response = await service.api.patch(`users/${user.id}/profile`, {
        json: { profile: { familyName: 'Lovelace', nickname: 'Countess', address: { locality: 'London' } } },
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      const expected = {
        givenName: 'Ada',
        familyName: 'Lovelace',
        nickname: 'Countess',
        address: { locality: 'London' },
      };
      expect(response.body).to.deep.equal(expected);
      expect((await getUser(user.id)).body.profile).to.deep.equal(expected);
    });

    it('PATCH /profile refuses unknown profile fields with 400 and unknown users with 404', async () => {
      const user = await createUser();
      expectError(
        await service.api.patch(`users/${user.id}/profile`, { json: { profile: { hairColour: 'red' } } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch('users/no-such-user/profile', { json: { profile: {} } }),
        404,
        'entity.not_exists_with_id',
      );
    });
  });

  describe('suspension', () => {
    it('PATCH /is-suspended toggles isSuspended and answers with the user', async () => {
      const user = await createUser();

      const suspended = await service.api.patch<User>(`users/${user.id}/is-suspended`, { json: { isSuspended: true } });
      expect(suspended.statusCode, JSON.stringify(suspended.body)).to.equal(200);
      expect(suspended.body).to.have.all.keys(...userKeys);
      expect(suspended.body).to.include({ id: user.id, isSuspended: true });
      expect((await getUser(user.id)).body.isSuspended).to.equal(true);

      const reactivated = await service.api.patch<User>(`users/${user.id}/is-suspended`, {
        json: { isSuspended: false },
      });
      expect(reactivated.statusCode).to.equal(200);
      expect(reactivated.body.isSuspended).to.equal(false);
      expect((await getUser(user.id)).body.isSuspended).to.equal(false);
    });

    it('refuses a non-boolean with 400 and an unknown user with 404', async () => {
      const user = await createUser();
      expectError(
        await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: 'yes' } }),
        400,
        'guard.invalid_input',
      );
      expectError(await service.api.patch(`users/${user.id}/is-suspended`, { json: {} }), 400, 'guard.invalid_input');
      expectError(
        await service.api.patch('users/no-such-user/is-suspended', { json: { isSuspended: true } }),
        404,
        'entity.not_exists_with_id',
      );
    });

    it('ends the user’s sessions, grants and refresh tokens, and no one else’s', async () => {
      const user = await createUser();
      const bystander = await createUser();
      await plantSessions(user.id);
      await plantSessions(bystander.id);

      // Other changes leave sessions alone.
      expect((await service.api.patch(`users/${user.id}`, { json: { name: 'Still signed in' } })).statusCode).to.equal(
        200,
      );
      expect(await sessionModelsOf(user.id)).to.deep.equal(['Grant', 'RefreshToken', 'Session']);

      const response = await service.api.patch<User>(`users/${user.id}/is-suspended`, { json: { isSuspended: true } });
      expect(response.statusCode).to.equal(200);
      expect(response.body.isSuspended).to.equal(true);

      expect(await sessionModelsOf(user.id)).to.deep.equal([]);
      expect(await sessionModelsOf(bystander.id)).to.deep.equal(['Grant', 'RefreshToken', 'Session']);
    });
  });

  describe('DELETE /api/users/:id', () => {
    it('deletes with 204, after which the user is 404 everywhere', async () => {
      const user = await createUser({ password: goodPassword });
      const deleted = await service.api.delete(`users/${user.id}`);
      expect(deleted.statusCode).to.equal(204);
      expect(deleted.body).to.equal('');

      expectError(await getUser(user.id), 404, 'entity.not_exists_with_id');
      expectError(await service.api.delete(`users/${user.id}`), 404, 'entity.not_exists_with_id');
      expectError(await service.api.get(`users/${user.id}/custom-data`), 404, 'entity.not_exists_with_id');
      expect(await listIds({ search: user.username! })).to.deep.equal([]);

      // Its identifiers are free again.
      expect((await createUser({ username: user.username })).username).to.equal(user.username);
    });

    it('ends the user’s sessions, grants and refresh tokens, and no one else’s', async () => {
      const user = await createUser();
      const bystander = await createUser();
      await plantSessions(user.id);
      await plantSessions(bystander.id);

      expect((await service.api.delete(`users/${user.id}`)).statusCode).to.equal(204);

      expect(await sessionModelsOf(user.id)).to.deep.equal([]);
      expect(await sessionModelsOf(bystander.id)).to.deep.equal(['Grant', 'RefreshToken', 'Session']);
    });
  });

  describe('default roles', () => {
    it('gives users created afterwards every default User role, and only those', async () => {
      const earlier = await createUser();
      const defaultRole = await createRole({ isDefault: true });
      const machineDefault = await createRole({ type: 'MachineToMachine', isDefault: true });
      const ordinary = await createRole();
      try {
        const user = await createUser();
        const response = await service.api.get<Role[]>(`users/${user.id}/roles`);
        expect(response.statusCode).to.equal(200);
        expect(response.body.map(({ id }) => id)).to.deep.equal([defaultRole.id]);
        expect(response.headers['total-number']).to.equal('1');
        expect(await roleIdsOf(earlier.id), 'a user created before the role').to.deep.equal([]);

        // A role that stops being a default is not given any more.
        expect(
          (await service.api.patch(`roles/${defaultRole.id}`, { json: { isDefault: false } })).statusCode,
        ).to.equal(200);
        expect(await roleIdsOf((await createUser()).id)).to.deep.equal([]);
        expect(await roleIdsOf(user.id), 'users keep the role they were given').to.deep.equal([defaultRole.id]);
      } finally {
        // Later tests create users: leave no default role behind.
        for (const role of [defaultRole, machineDefault, ordinary]) {
          await service.api.delete(`roles/${role.id}`);
        }
      }
    });
  });
});
