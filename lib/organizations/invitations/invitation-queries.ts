import { tenantId } from '../../shared/tenant.ts';
import type { Queryable } from '../../storage/database.ts';
import { listPage, type Page } from '../../storage/list.ts';
import type { Invitation, InvitationStatus, RoleReference } from '../schemas.ts';

type InvitationRow = {
  id: string;
  inviter_id: string | null;
  invitee: string;
  accepted_user_id: string | null;
  organization_id: string;
  status: InvitationStatus;
  created_at: number;
  updated_at: number;
  expires_at: number;
};

/**
 * A pending invitation past its `expiresAt` reads as Expired whether or not its row says so yet
 * (Logto computes the status the same way), so expiry needs no background job.
 */
function toInvitation(row: InvitationRow, organizationRoles: RoleReference[], now: number): Invitation {
  const expiresAt = row.expires_at;
  return {
    tenantId,
    id: row.id,
    inviterId: row.inviter_id,
    invitee: row.invitee,
    acceptedUserId: row.accepted_user_id,
    organizationId: row.organization_id,
    status: row.status === 'Pending' && expiresAt < now ? 'Expired' : row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt,
    organizationRoles,
  };
}

async function rolesOfInvitations(db: Queryable, ids: string[]): Promise<Map<string, RoleReference[]>> {
  const rows = await db('organization_invitation_roles')
    .join('organization_roles', 'organization_roles.id', 'organization_invitation_roles.organization_role_id')
    .whereIn('organization_invitation_roles.organization_invitation_id', ids)
    .orderBy('organization_roles.name')
    .select<Array<{ invitation_id: string; id: string; name: string }>>(
      'organization_invitation_roles.organization_invitation_id as invitation_id',
      'organization_roles.id',
      'organization_roles.name',
    );
  const byInvitation = new Map<string, RoleReference[]>();
  for (const { invitation_id: invitationId, ...role } of rows) {
    byInvitation.set(invitationId, [...(byInvitation.get(invitationId) ?? []), role]);
  }
  return byInvitation;
}

export type NewInvitation = Omit<Invitation, 'tenantId' | 'organizationRoles'>;

export async function insertInvitation(db: Queryable, invitation: NewInvitation): Promise<void> {
  await db('organization_invitations').insert({
    id: invitation.id,
    inviter_id: invitation.inviterId,
    invitee: invitation.invitee,
    accepted_user_id: invitation.acceptedUserId,
    organization_id: invitation.organizationId,
    status: invitation.status,
    created_at: invitation.createdAt,
    updated_at: invitation.updatedAt,
    expires_at: invitation.expiresAt,
  });
}

export async function findInvitation(db: Queryable, id: string): Promise<Invitation | undefined> {
  const row = await db('organization_invitations').where({ id }).first<InvitationRow | undefined>();
  if (!row) {
    return undefined;
  }
  const roles = await rolesOfInvitations(db, [id]);
  return toInvitation(row, roles.get(id) ?? [], Date.now());
}

export type InvitationFilter = { organizationId?: string; inviterId?: string; invitee?: string };

const whereInvitee = (invitee: string) => ['lower(??) = lower(?)', ['invitee', invitee]] as const;

export async function listInvitations(
  db: Queryable,
  filter: InvitationFilter,
  page: Page,
): Promise<{ items: Invitation[]; total: number }> {
  const query = db('organization_invitations').select('*');
  if (filter.organizationId) {
    query.where({ organization_id: filter.organizationId });
  }
  if (filter.inviterId) {
    query.where({ inviter_id: filter.inviterId });
  }
  if (filter.invitee) {
    query.whereRaw(...whereInvitee(filter.invitee));
  }
  const { rows, total } = await listPage<InvitationRow>(query, page);
  const roles = await rolesOfInvitations(
    db,
    rows.map(({ id }) => id),
  );
  const now = Date.now();
  return { items: rows.map((row) => toInvitation(row, roles.get(row.id) ?? [], now)), total };
}

/** Whether the invitee has a pending, unexpired invitation to the organization. */
export async function hasPendingInvitation(
  db: Queryable,
  organizationId: string,
  invitee: string,
  now: number,
): Promise<boolean> {
  const row = await db('organization_invitations')
    .where({ organization_id: organizationId, status: 'Pending' })
    .where('expires_at', '>=', now)
    .whereRaw(...whereInvitee(invitee))
    .first<{ id: string } | undefined>('id');
  return row !== undefined;
}

/** Writes Expired into the rows of the invitee's pending invitations that have expired (Logto does on each new one). */
export async function markExpiredInvitations(
  db: Queryable,
  organizationId: string,
  invitee: string,
  now: number,
): Promise<void> {
  await db('organization_invitations')
    .where({ organization_id: organizationId, status: 'Pending' })
    .where('expires_at', '<', now)
    .whereRaw(...whereInvitee(invitee))
    .update({ status: 'Expired', updated_at: now });
}

/**
 * Moves a pending, unexpired invitation to its final status. The condition makes it a claim: of two
 * concurrent acceptances only one updates the row, and the caller refuses the other.
 */
export async function settlePendingInvitation(
  db: Queryable,
  id: string,
  change: { status: 'Accepted' | 'Revoked'; acceptedUserId: string | null; now: number },
): Promise<boolean> {
  const updated = await db('organization_invitations')
    .where({ id, status: 'Pending' })
    .where('expires_at', '>=', change.now)
    .update({
      status: change.status,
      updated_at: change.now,
      ...(change.acceptedUserId !== null && { accepted_user_id: change.acceptedUserId }),
    });
  return updated > 0;
}

export async function deleteInvitation(db: Queryable, id: string): Promise<boolean> {
  return (await db('organization_invitations').where({ id }).delete()) > 0;
}
