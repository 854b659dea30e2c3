import { createHash, pbkdf2Sync } from 'node:crypto';
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import { expect } from 'chai';

import { createSpa, openExperience, passwordVerification } from '../experience/experience-helpers.ts';
import { expectError } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

type User = { id: string; primaryPhone: string | null; hasPassword: boolean; updatedAt: number };
type DetailedUser = User & {
  passwordDigest?: string | null;
  passwordAlgorithm?: string | null;
  ssoIdentities?: unknown[];
};

const hex = (algorithm: string, text: string) => createHash(algorithm).update(text).digest('hex');

/** Logto's own example of a Legacy digest: SHA-512 of the password alone. */
const legacySha512 = JSON.stringify(['sha512', ['@'], hex('sha512', 'password')]);

describe('management API: users moved in with their password digests (Logto’s import)', () => {
  let service: TestService;
  let spa: { id: string };

  before(async () => {
    service = await startService();
    spa = await createSpa(service);
  });
  after(async () => {
    await ifSet(service)?.stop();
  });

  const create = (body: Record<string, unknown>) =>
    service.api.post<User>('users', { json: { username: unique('imported'), ...body } });

  async function imported(passwordDigest: string, passwordAlgorithm: string): Promise<User> {
    const response = await create({ passwordDigest, passwordAlgorithm });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.hasPassword).to.equal(true);
    return response.body;
  }

  const verify = (id: string, password: string) =>
    service.api.post(`users/${id}/password/verify`, { json: { password } });
  const detailed = async (id: string) =>
    (await service.api.get<DetailedUser>(`users/${id}`, { searchParams: { includePasswordHash: 'true' } })).body;

  const cases: Array<[string, () => string | Promise<string>]> = [
    ['MD5', () => '5f4dcc3b5aa765d61d8327deb882cf99'],
    ['SHA1', () => hex('sha1', 'password')],
    ['SHA256', () => hex('sha256', 'password')],
    ['Bcrypt', () => bcrypt.hash('password', 4)],
    ['Argon2i', () => argon2.hash('password', { type: argon2.argon2i, timeCost: 2, memoryCost: 4096 })],
    ['Argon2d', () => argon2.hash('password', { type: argon2.argon2d, timeCost: 2, memoryCost: 4096 })],
    ['Legacy', () => legacySha512],
  ];

  for (const [algorithm, digestOf] of cases) {
    it(`verifies a ${algorithm} digest, refuses a wrong password, and replaces the digest by ours once it matched`, async () => {
      const digest = await digestOf();
      const user = await imported(digest, algorithm);
      expect(await detailed(user.id)).to.include({ passwordDigest: digest, passwordAlgorithm: algorithm });

      expectError(await verify(user.id, 'wrong password'), 422, 'session.invalid_credentials');
      expect((await detailed(user.id)).passwordAlgorithm).to.equal(algorithm);

      expect((await verify(user.id, 'password')).statusCode).to.equal(204);
      const upgraded = await detailed(user.id);
      expect(upgraded.passwordAlgorithm).to.equal('Argon2id');
      expect(upgraded.passwordDigest).to.match(/^\$argon2id\$/);
      expect((await verify(user.id, 'password')).statusCode).to.equal(204);
    });
  }

  it('signs an imported user in through the Experience API and upgrades the digest there', async () => {
    const username = unique('moved');
    const response = await service.api.post<User>('users', {
      json: { username, passwordDigest: await bcrypt.hash('their old password', 4), passwordAlgorithm: 'Bcrypt' },
    });
    expect(response.statusCode).to.equal(200);
    const identifier = { type: 'username' as const, value: username };

    const wrong = await passwordVerification(await openExperience(service, spa.id), identifier, 'not it');
    expectError(wrong, 422, 'session.invalid_credentials');

    const right = await passwordVerification(await openExperience(service, spa.id), identifier, 'their old password');
    expect(right.statusCode, JSON.stringify(right.body)).to.equal(200);
    expect((await detailed(response.body.id)).passwordAlgorithm).to.equal('Argon2id');
    const again = await passwordVerification(await openExperience(service, spa.id), identifier, 'their old password');
    expect(again.statusCode).to.equal(200);
  });

  it('reads PBKDF2 and Firebase scrypt Legacy digests', async () => {
    const salt = 'c2FsdA==';
    const pbkdf2 = JSON.stringify([
      'pbkdf2',
      ['hex:73616c74', '1000', '32', 'sha256', '@'],
      pbkdf2Sync('password', Buffer.from('salt'), 1000, 32, 'sha256').toString('hex'),
    ]);
    const user = await imported(pbkdf2, 'Legacy');
    expectError(await verify(user.id, 'Password'), 422, 'session.invalid_credentials');
    expect((await verify(user.id, 'password')).statusCode).to.equal(204);
    // A Firebase export's parameters (rounds 8, memory cost 14) with a made-up key: the check is self-consistent.
    const scryptUser = await imported(
      JSON.stringify(['firebase-scrypt', [salt, 'c2lnbmVy', 'Bw==', '8', '14', '@'], 'wrong-hash']),
      'Legacy',
    );
    expectError(await verify(scryptUser.id, 'password'), 422, 'session.invalid_credentials');
  });

  it('refuses what Logto refuses: a password with a digest, a digest alone, a digest past 256 characters, an unreadable Legacy digest', async () => {
    expectError(
      await create({ password: 'Tr0ub4dor&3x', passwordDigest: hex('md5', 'x'), passwordAlgorithm: 'MD5' }),
      400,
      'user.password_and_digest',
    );
    expectError(await create({ passwordDigest: hex('md5', 'x') }), 400, 'user.password_algorithm_required');
    expect((await create({ passwordDigest: 'a'.repeat(256), passwordAlgorithm: 'MD5' })).statusCode).to.equal(200);
    expectError(
      await create({ passwordDigest: 'a'.repeat(257), passwordAlgorithm: 'MD5' }),
      400,
      'guard.invalid_input',
    );
    expectError(await create({ passwordDigest: 'x', passwordAlgorithm: 'Whirlpool9' }), 400, 'guard.invalid_input');
    expectError(
      await create({ passwordDigest: 'not json', passwordAlgorithm: 'Legacy' }),
      400,
      'password.invalid_legacy_password_format',
    );
    expectError(
      await create({ passwordDigest: JSON.stringify(['sha512', ['salt'], 'ab']), passwordAlgorithm: 'Legacy' }),
      400,
      'password.invalid_legacy_password_format',
    );
    expectError(
      await create({ passwordDigest: JSON.stringify(['rot13', ['@'], 'ab']), passwordAlgorithm: 'Legacy' }),
      400,
      'password.unsupported_legacy_hash_algorithm',
    );
    expectError(
      await create({
        passwordDigest: JSON.stringify(['pbkdf2', ['salt', '99999999999', '32', 'sha256', '@'], 'ab']),
        passwordAlgorithm: 'Legacy',
      }),
      400,
      'password.invalid_legacy_password_format',
    );
  });

  describe('GET /api/users/:userId', () => {
    it('shows the password digest only with includePasswordHash, and SSO identities only with includeSsoIdentities', async () => {
      const withPassword = (await create({ password: 'Tr0ub4dor&3x' })).body;
      const plain = await service.api.get<DetailedUser>(`users/${withPassword.id}`);
      expect(plain.body).not.to.have.any.keys('passwordDigest', 'passwordAlgorithm', 'ssoIdentities');
      const hashed = await detailed(withPassword.id);
      expect(hashed.passwordAlgorithm).to.equal('Argon2id');
      expect(hashed.passwordDigest).to.match(/^\$argon2id\$/);

      const without = (await create({})).body;
      expect(await detailed(without.id)).to.include({
        passwordDigest: null,
        passwordAlgorithm: null,
        hasPassword: false,
      });
      const sso = await service.api.get<DetailedUser>(`users/${without.id}`, {
        searchParams: { includeSsoIdentities: 'true' },
      });
      expect(sso.body.ssoIdentities).to.deep.equal([]);
      expect(sso.body).not.to.have.any.keys('passwordDigest');
    });
  });

  describe('phone numbers, as Logto normalises them', () => {
    it('stores a number without its national trunk 0, and treats both forms as one number', async () => {
      const created = await create({ primaryPhone: '610412345678' });
      expect(created.body.primaryPhone).to.equal('61412345678');
      expect((await service.api.get<User>(`users/${created.body.id}`)).body.primaryPhone).to.equal('61412345678');
      expectError(await create({ primaryPhone: '61412345678' }), 422, 'user.phone_already_in_use');
      expectError(await create({ primaryPhone: '+610412345678' }), 422, 'user.phone_already_in_use');

      const other = (await create({})).body;
      for (const form of ['610412345678', '61412345678']) {
        expectError(
          await service.api.patch(`users/${other.id}`, { json: { primaryPhone: form } }),
          422,
          'user.phone_already_in_use',
        );
      }
      const own = await service.api.patch<User>(`users/${created.body.id}`, { json: { primaryPhone: '610412345678' } });
      expect(own.statusCode).to.equal(200);
      expect(own.body.primaryPhone).to.equal('61412345678');

      const uk = await create({ primaryPhone: '4407911123456' });
      expect(uk.body.primaryPhone).to.equal('447911123456');
      await service.api.delete(`users/${created.body.id}`);
      await service.api.delete(`users/${uk.body.id}`);
    });

    it('reads a number as people type it (spaces, several trunk zeros), as Logto does', async () => {
      for (const typed of ['+61 0412 345 678', '+61 412 345 678', '61 0412 345 678', '61 412 345 678']) {
        const created = await create({ primaryPhone: typed });
        expect(created.statusCode, `${typed}: ${JSON.stringify(created.body)}`).to.equal(200);
        expect(created.body.primaryPhone, typed).to.equal('61412345678');
        const other = (await create({})).body;
        for (const again of ['+61 0412 345 678', '61 412 345 678']) {
          expectError(
            await service.api.patch(`users/${other.id}`, { json: { primaryPhone: again } }),
            422,
            'user.phone_already_in_use',
          );
        }
        await service.api.delete(`users/${created.body.id}`);
        await service.api.delete(`users/${other.id}`);
      }
      const uk = await create({ primaryPhone: '+44 07911 123456' });
      expect(uk.body.primaryPhone).to.equal('447911123456');
      const zeros = await service.api.patch<User>(`users/${uk.body.id}`, { json: { primaryPhone: '+1 000123456789' } });
      expect(zeros.statusCode, JSON.stringify(zeros.body)).to.equal(200);
      expect(zeros.body.primaryPhone).to.equal('1123456789');
      expectError(await create({ primaryPhone: '+61 0412 abc' }), 400, 'guard.invalid_input');
      await service.api.delete(`users/${uk.body.id}`);
    });

    it('finds the account at sign-in by either form', async () => {
      const username = unique('phoned');
      const user = (await create({ username, primaryPhone: '4407911654321', password: 'Tr0ub4dor&3x' })).body;
      expect(user.primaryPhone).to.equal('447911654321');
      const settings = await service.api.get('sign-in-exp');
      const methods = [
        ...settings.body.signIn.methods,
        { identifier: 'phone', password: true, verificationCode: false, isPasswordPrimary: true },
      ];
      const patched = await service.api.patch('sign-in-exp', { json: { signIn: { methods } } });
      expect(patched.statusCode, JSON.stringify(patched.body)).to.equal(200);
      for (const value of ['4407911654321', '447911654321']) {
        const response = await passwordVerification(
          await openExperience(service, spa.id),
          { type: 'phone', value },
          'Tr0ub4dor&3x',
        );
        expect(response.statusCode, `${value}: ${JSON.stringify(response.body)}`).to.equal(200);
      }
      await service.api.patch('sign-in-exp', { json: { signIn: { methods: settings.body.signIn.methods } } });
    });
  });

  it('answers PATCH /api/users/:userId with nothing to change 422 entity.invalid_input, as Logto', async () => {
    const user = (await create({})).body;
    expectError(await service.api.patch(`users/${user.id}`, { json: {} }), 422, 'entity.invalid_input');
  });
});
