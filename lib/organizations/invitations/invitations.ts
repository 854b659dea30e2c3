import type { Knex } from 'knex';

import { RequestError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/database.ts';
import { generateId } from '../../storage/ids.ts';
import { findUser } from '../../users/queries.ts';
import { addLinks, organizationLinks } from '../links.ts';
import { getInvitation, getOrganization, requireOrganizationRoles, requireUsers } from '../lookups.ts';
import { isMemberByEmail } from '../members/member-queries.ts';
import { joinOrganization, type MembershipDelta } from '../members/memberships.ts';
import type { Invitation } from '../schemas.ts';
import {
  deleteInvitation,
  hasPendingInvitation,
  insertInvitation,
  markExpiredInvitations,
  settlePendingInvitation,
} from './invitation-queries.ts';

// Invitations to join an organization, one function per change, inside the caller's transaction.
// Logto answers its invitation rule violations with 422 request.invalid_input and a reason.

export type NewInvitationInput = {
  inviterId?: string | null;
  invitee: string;
  organizationId: string;
  expiresAt: number;
  organizationRoleIds?: string[];
};

/**
 * A pending invitation for the invitee, with the User roles they get on acceptance. One pending
 * invitation per invitee and organization; expired ones are marked so as Logto does.
 */
export async function createInvitation(trx: Queryable, input: NewInvitationInput): Promise<Invitation> {
  const now = Date.now();
  if (input.expiresAt <= now) {
    throw new RequestError(
      'request.invalid_input',
      { details: 'The value of `expiresAt` must be in the future.' },
      { status: 400 },
    );
  }
  await getOrganization(trx, input.organizationId);
  if (input.inviterId) {
    await requireUsers(trx, [input.inviterId]);
  }
  const roleIds = [...new Set(input.organizationRoleIds ?? [])];
  await requireOrganizationRoles(trx, roleIds, 'User');
  if (await isMemberByEmail(trx, input.organizationId, input.invitee)) {
    throw new RequestError('request.invalid_input', {
      details: 'The invitee is already a member of the organization.',
    });
  }
  await markExpiredInvitations(trx, input.organizationId, input.invitee, now);
  if (await hasPendingInvitation(trx, input.organizationId, input.invitee, now)) {
    throw new RequestError('entity.unique_integrity_violation', {
      reason: 'The invitee already has a pending invitation to this organization.',
    });
  }
  const id = generateId();
  await insertInvitation(trx, {
    id,
    inviterId: input.inviterId ?? null,
    invitee: input.invitee,
    acceptedUserId: null,
    organizationId: input.organizationId,
    status: 'Pending',
    createdAt: now,
    updatedAt: now,
    expiresAt: input.expiresAt,
  });
  await addLinks(trx, organizationLinks.invitationRoles(id), roleIds);
  return getInvitation(trx, id);
}

/** Only a pending, unexpired invitation changes status; Accepted, Revoked and Expired are final. */
function assertPending(invitation: Invitation): void {
  if (invitation.status !== 'Pending') {
    throw new RequestError('request.invalid_input', {
      details: `The status of the invitation cannot be changed anymore (it is ${invitation.status}).`,
    });
  }
}

/**
 * The user joins the organization with the invitation's roles, and the invitation becomes Accepted,
 * all or nothing. The user must own the invited e-mail address (Logto's rule).
 */
export async function acceptInvitation(
  trx: Knex.Transaction,
  id: string,
  userId: string,
): Promise<{ invitation: Invitation; membership: MembershipDelta }> {
  const invitation = await getInvitation(trx, id);
  assertPending(invitation);
  const user = await findUser(trx, userId);
  if (!user) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'user', id: userId });
  }
  if (user.primaryEmail?.toLowerCase() !== invitation.invitee.toLowerCase()) {
    throw new RequestError('request.invalid_input', {
      details: 'The accepted user must have the same email as the invitee.',
    });
  }
  if (!(await settlePendingInvitation(trx, id, { status: 'Accepted', acceptedUserId: userId, now: Date.now() }))) {
    throw new RequestError('request.invalid_input', {
      details: 'The status of the invitation cannot be changed anymore.',
    });
  }
  const membership = await joinOrganization(trx, invitation.organizationId, userId);
  await addLinks(
    trx,
    organizationLinks.userRoles(invitation.organizationId, userId),
    invitation.organizationRoles.map(({ id: roleId }) => roleId),
  );
  return { invitation: await getInvitation(trx, id), membership };
}

export async function revokeInvitation(trx: Queryable, id: string): Promise<Invitation> {
  assertPending(await getInvitation(trx, id));
  if (!(await settlePendingInvitation(trx, id, { status: 'Revoked', acceptedUserId: null, now: Date.now() }))) {
    throw new RequestError('request.invalid_input', {
      details: 'The status of the invitation cannot be changed anymore.',
    });
  }
  return getInvitation(trx, id);
}

export async function removeInvitation(trx: Queryable, id: string): Promise<void> {
  if (!(await deleteInvitation(trx, id))) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'organization invitation', id });
  }
}
