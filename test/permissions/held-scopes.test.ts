import { expect } from 'chai';
import type { Knex } from 'knex';

import { scopesHeldByUser } from '../../lib/permissions/held-scopes.ts';
import { readUserScopes } from '../../lib/permissions/queries.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { bumpCacheVersion, SharedCache } from '../../lib/storage/shared-cache.ts';
import { freshDatabaseUrl } from '../support/database.ts';

/**
 * Roles × organization roles × resources. The fixture:
 *   resource r1 with scopes a, b; resource r2 with scope c
 *   role A grants r1:a; role C grants r2:c
 *   organization role B grants r1:b; organization role AC grants r1:a and r2:c
 *   organizations o1, o2
 */
const users = {
  roleOnly: { roles: ['A'], memberships: {} },
  organizationOnly: { roles: [], memberships: { o1: ['B'] } },
  everything: { roles: ['A'], memberships: { o1: ['B'], o2: ['AC'] } },
  nothing: { roles: [], memberships: {} },
  memberWithoutRoles: { roles: [], memberships: { o1: [] } },
  twoPaths: { roles: ['A', 'C'], memberships: { o2: ['AC'] } },
} as const;

const cases: Array<[keyof typeof users, 'r1' | 'r2', 'o1' | 'o2' | undefined, string[]]> = [
  ['roleOnly', 'r1', undefined, ['a']],
  ['roleOnly', 'r2', undefined, []],
  ['roleOnly', 'r1', 'o1', []],
  ['organizationOnly', 'r1', undefined, ['b']],
  ['organizationOnly', 'r1', 'o1', ['b']],
  ['organizationOnly', 'r1', 'o2', []],
  ['organizationOnly', 'r2', undefined, []],
  ['everything', 'r1', undefined, ['a', 'b']],
  ['everything', 'r2', undefined, ['c']],
  ['everything', 'r1', 'o1', ['b']],
  ['everything', 'r1', 'o2', ['a']],
  ['everything', 'r2', 'o1', []],
  ['everything', 'r2', 'o2', ['c']],
  ['nothing', 'r1', undefined, []],
  ['memberWithoutRoles', 'r1', undefined, []],
  ['memberWithoutRoles', 'r1', 'o1', []],
  ['twoPaths', 'r1', undefined, ['a']],
  ['twoPaths', 'r2', undefined, ['c']],
];

describe('the permission model: scopes a user holds on a resource', () => {
  let db: Knex;
  const now = Date.now();

  before(async () => {
    db = openDatabase(await freshDatabaseUrl());
    await migrateToLatest(db);
    await db('resources').insert(
      ['r1', 'r2'].map((id) => ({
        id,
        name: id,
        indicator: `https://${id}.example.com`,
        access_token_ttl: 3600,
        created_at: now,
      })),
    );
    await db('scopes').insert([
      { id: 'a', resource_id: 'r1', name: 'a', created_at: now },
      { id: 'b', resource_id: 'r1', name: 'b', created_at: now },
      { id: 'c', resource_id: 'r2', name: 'c', created_at: now },
    ]);
    await db('roles').insert(
      ['A', 'C'].map((id) => ({ id, name: id, description: id, type: 'User', created_at: now })),
    );
    await db('roles_scopes').insert([
      { role_id: 'A', scope_id: 'a' },
      { role_id: 'C', scope_id: 'c' },
    ]);
    await db('organizations').insert(['o1', 'o2'].map((id) => ({ id, name: id, custom_data: '{}', created_at: now })));
    await db('organization_roles').insert(['B', 'AC'].map((id) => ({ id, name: id, created_at: now })));
    await db('organization_role_resource_scopes').insert([
      { organization_role_id: 'B', scope_id: 'b' },
      { organization_role_id: 'AC', scope_id: 'a' },
      { organization_role_id: 'AC', scope_id: 'c' },
    ]);
    for (const [id, { roles, memberships }] of Object.entries(users)) {
      await db('users').insert({
        id,
        custom_data: '{}',
        profile: '{}',
        identities: '{}',
        created_at: now,
        updated_at: now,
      });
      for (const role of roles) {
        await db('users_roles').insert({ user_id: id, role_id: role });
      }
      for (const [organization, organizationRoles] of Object.entries(memberships) as Array<
        [string, readonly string[]]
      >) {
        await db('organization_users').insert({ organization_id: organization, user_id: id });
        for (const role of organizationRoles) {
          await db('organization_user_roles').insert({
            organization_id: organization,
            user_id: id,
            organization_role_id: role,
          });
        }
      }
    }
  });
  after(() => db.destroy());

  for (const [user, resource, organization, expected] of cases) {
    it(`${user} on ${resource}${organization ? ` in ${organization}` : ''}: ${expected.join(' ') || 'nothing'}`, async () => {
      expect(await readUserScopes(db, user, resource, organization)).to.deep.equal(expected);
    });
  }

  it('answers from memory until a change bumps the roles version, then reads again', async () => {
    const cache = new SharedCache(db);
    await cache.sync();
    expect(await scopesHeldByUser(db, cache, 'nothing', 'r1')).to.deep.equal([]);
    await db('users_roles').insert({ user_id: 'nothing', role_id: 'A' });
    await cache.sync();
    expect(await scopesHeldByUser(db, cache, 'nothing', 'r1'), 'cached until bumped').to.deep.equal([]);
    await bumpCacheVersion(db, 'roles');
    await cache.sync();
    expect(await scopesHeldByUser(db, cache, 'nothing', 'r1')).to.deep.equal(['a']);
  });
});
