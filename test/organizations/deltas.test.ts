import { expect } from 'chai';
import type { Knex } from 'knex';

import { acceptInvitation, createInvitation } from '../../lib/organizations/invitations/invitations.ts';
import { addLinks, organizationLinks } from '../../lib/organizations/links.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { insertUser } from '../../lib/users/queries.ts';
import { freshDatabaseUrl } from '../support/database.ts';

/**
 * Accepting an invitation reports what changed: the payload of Organization.Membership.Updated events.
 * The management routes' deltas are checked over HTTP in test/hooks/events.test.ts.
 */
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
  });
  after(() => db.destroy());

  const empty = {
    organizationId,
    addedUserIds: [],
    removedUserIds: [],
    addedApplicationIds: [],
    removedApplicationIds: [],
  };

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
    await db.transaction((trx) => addLinks(trx, organizationLinks.users(organizationId), ['u2']));
    expect((await db.transaction((trx) => acceptInvitation(trx, second.id, 'u2'))).membership).to.deep.equal(empty);
  });
});
