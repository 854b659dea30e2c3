import type { Knex } from 'knex';
import type { Context } from 'koa';

import type { LinkChange } from '../../http/link-set-routes.ts';
import { addLinks, organizationLinks } from '../links.ts';

/** What a membership change did: the payload of Logto's `Organization.Membership.Updated` event. */
export type MembershipDelta = {
  organizationId: string;
  addedUserIds: string[];
  removedUserIds: string[];
  addedApplicationIds: string[];
  removedApplicationIds: string[];
};

const membershipDelta = (
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

/** The membership delta of a link-set change, put where the route's event reads it (lib/management/route-events.ts). */
export const membershipChanged =
  (kind: MemberKind) =>
  (ctx: Context, params: { id: string }, change: LinkChange): void => {
    ctx.state.membershipDelta = membershipDelta(
      params.id,
      kind === 'user'
        ? { addedUserIds: change.added, removedUserIds: change.removed }
        : { addedApplicationIds: change.added, removedApplicationIds: change.removed },
    );
  };

/** For an accepted invitation: joins the user if needed and reports whether they were added. */
export async function joinOrganization(
  trx: Knex.Transaction,
  organizationId: string,
  userId: string,
): Promise<MembershipDelta> {
  const addedUserIds = await addLinks(trx, organizationLinks.users(organizationId), [userId]);
  return membershipDelta(organizationId, { addedUserIds });
}
