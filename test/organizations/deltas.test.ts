import { expect } from 'chai';
import type { Knex } from 'knex';

import { acceptInvitation, createInvitation } from '../../lib/organizations/invitations.ts';
import {
  addOrganizationApplications,
  addOrganizationUsers,
  removeOrganizationApplication,
  removeOrganizationUser,
  replaceOrganizationApplications,
  replaceOrganizationUsers,
} from '../../lib/organizations/memberships.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { insertUser } from '../../lib/users/queries.ts';
import { freshDatabaseUrl } from '../support/database.ts';

/** The membership functions report what changed: the payload of Organization.Membership.Updated events. */
describe('organization membership deltas', () => {
  let db: Knex;
  const organizationId = 'org1';
  const now = Date.now();

  before(async () => {
    db = openDatabase(await freshDatabaseUrl());
    await migrateToLatest(db);
    await db('organizations').insert({ id: organizationId, name: 'Org', custom_data: '{}', created_at: now });
    for (const id of ['u1', 'u2', 'u3']) {
      await insertUser(db, id, { primaryEmail: `${id}@example.com` });
    }
    const application = {
      name: 'm2m',
      secret: 's',
      oidc_client_metadata: '{}',
      custom_client_metadata: '{}',
      custom_data: '{}',
      created_at: now,
    };
    await db('applications').insert(['a1', 'a2'].map((id) => ({ ...application, id, type: 'MachineToMachine' })));
  });
  after(() => db.destroy());

  const empty = {
    organizationId,
    addedUserIds: [],
    removedUserIds: [],
    addedApplicationIds: [],
    removedApplicationIds: [],
  };

  it('adding users reports only those who were not members', async () => {
    expect(await db.transaction((trx) => addOrganizationUsers(trx, organizationId, ['u1', 'u2']))).to.deep.equal({
      ...empty,
      addedUserIds: ['u1', 'u2'],
    });
    expect(await db.transaction((trx) => addOrganizationUsers(trx, organizationId, ['u2', 'u3', 'u3']))).to.deep.equal({
      ...empty,
      addedUserIds: ['u3'],
    });
  });

  it('replacing and removing users report who joined and who left', async () => {
    const replaced = await db.transaction((trx) => replaceOrganizationUsers(trx, organizationId, ['u1']));
    expect({ ...replaced, removedUserIds: [...replaced.removedUserIds].sort() }).to.deep.equal({
      ...empty,
      removedUserIds: ['u2', 'u3'],
    });
    expect(await db.transaction((trx) => removeOrganizationUser(trx, organizationId, 'u1'))).to.deep.equal({
      ...empty,
      removedUserIds: ['u1'],
    });
  });

  it('application membership reports application ids', async () => {
    expect(await db.transaction((trx) => addOrganizationApplications(trx, organizationId, ['a1']))).to.deep.equal({
      ...empty,
      addedApplicationIds: ['a1'],
    });
    expect(await db.transaction((trx) => replaceOrganizationApplications(trx, organizationId, ['a2']))).to.deep.equal({
      ...empty,
      addedApplicationIds: ['a2'],
      removedApplicationIds: ['a1'],
    });
    expect(await db.transaction((trx) => removeOrganizationApplication(trx, organizationId, 'a2'))).to.deep.equal({
      ...empty,
      removedApplicationIds: ['a2'],
    });
  });

  it('accepting an invitation reports the user joining, and nothing when they were a member', async () => {
    const first = await db.transaction((trx) =>
      createInvitation(trx, { invitee: 'u1@example.com', organizationId, expiresAt: Date.now() + 60_000 }),
    );
    const { membership } = await db.transaction((trx) => acceptInvitation(trx, first.id, 'u1'));
    expect(membership).to.deep.equal({ ...empty, addedUserIds: ['u1'] });

    // Invited, then added by an administrator before accepting.
    const second = await db.transaction((trx) =>
      createInvitation(trx, { invitee: 'u2@example.com', organizationId, expiresAt: Date.now() + 60_000 }),
    );
    await db.transaction((trx) => addOrganizationUsers(trx, organizationId, ['u2']));
    expect((await db.transaction((trx) => acceptInvitation(trx, second.id, 'u2'))).membership).to.deep.equal(empty);
  });
});
