import type { Knex } from 'knex';

import type { LinkChange } from '../../http/api/link-set-routes.ts';
import type { Effects, MembershipDelta } from '../../shared/event-data.ts';
import { addLinks, organizationLinks } from '../links.ts';

export type { MembershipDelta };

/** A delta naming only what changed; the lists left out are empty. */
export const deltaOf = (
  organizationId: string,
  change: Partial<Omit<MembershipDelta, 'organizationId'>>,
): MembershipDelta => ({
  organizationId,
  addedUserIds: [],
  removedUserIds: [],
  addedApplicationIds: [],
  removedApplicationIds: [],
  ...change,
});

/** Users and machine-to-machine applications are members the same way, each in their own table. */
export type MemberKind = 'user' | 'application';

/** A link-set change of the members: its `Organization.Membership.Updated` event, with the delta. */
export const membershipChanged =
  (kind: MemberKind) =>
  (effects: Effects, params: { id: string }, change: LinkChange): Promise<void> =>
    effects.emit('Organization.Membership.Updated', {
      membership: deltaOf(
        params.id,
        kind === 'user'
          ? { addedUserIds: change.added, removedUserIds: change.removed }
          : { addedApplicationIds: change.added, removedApplicationIds: change.removed },
      ),
    });

/** For an accepted invitation: joins the user if needed and reports whether they were added. */
export async function joinOrganization(
  trx: Knex.Transaction,
  organizationId: string,
  userId: string,
): Promise<MembershipDelta> {
  const addedUserIds = await addLinks(trx, organizationLinks.users(organizationId), [userId]);
  return deltaOf(organizationId, { addedUserIds });
}
