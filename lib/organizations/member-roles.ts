import type { Knex } from 'knex';

import { RequestError } from '../http/errors.ts';
import { addLinks, organizationLinks, removeLinks, replaceLinks, type LinkDelta, type Links } from './links.ts';
import { getOrganizationForUpdate, requireMembers, requireOrganizationRoles, resolveRoleIds } from './lookups.ts';
import type { OrganizationRoleType } from './schemas.ts';

/** Users and machine-to-machine applications hold organization roles the same way, each their own type. */
export type MemberKind = 'user' | 'application';

const roleType: Record<MemberKind, OrganizationRoleType> = { user: 'User', application: 'MachineToMachine' };

const roleLinks = (kind: MemberKind, organizationId: string, memberId: string): Links =>
  kind === 'user'
    ? organizationLinks.userRoles(organizationId, memberId)
    : organizationLinks.applicationRoles(organizationId, memberId);

/** Roles named by id and, for users, by name (Logto's body). */
export type RoleSelection = { ids?: string[]; names?: string[] };

/** The organization exists (404), the member belongs to it (422), the roles exist and fit the member (422). */
async function checkedRoleIds(
  trx: Knex.Transaction,
  kind: MemberKind,
  organizationId: string,
  memberId: string,
  roles: RoleSelection,
) {
  await getOrganizationForUpdate(trx, organizationId);
  await requireMembers(trx, kind, organizationId, [memberId]);
  const roleIds = await resolveRoleIds(trx, roles.ids ?? [], roles.names ?? []);
  await requireOrganizationRoles(trx, roleIds, roleType[kind]);
  return roleIds;
}

/** Gives a member roles; those held already are kept. Returns every role id named (resolved from names). */
export async function addMemberRoles(
  trx: Knex.Transaction,
  kind: MemberKind,
  organizationId: string,
  memberId: string,
  roles: RoleSelection,
): Promise<{ roleIds: string[]; added: string[] }> {
  const roleIds = await checkedRoleIds(trx, kind, organizationId, memberId, roles);
  return { roleIds, added: await addLinks(trx, roleLinks(kind, organizationId, memberId), roleIds) };
}

export async function replaceMemberRoles(
  trx: Knex.Transaction,
  kind: MemberKind,
  organizationId: string,
  memberId: string,
  roles: RoleSelection,
): Promise<LinkDelta> {
  const roleIds = await checkedRoleIds(trx, kind, organizationId, memberId, roles);
  return replaceLinks(trx, roleLinks(kind, organizationId, memberId), roleIds);
}

export async function removeMemberRole(
  trx: Knex.Transaction,
  kind: MemberKind,
  organizationId: string,
  memberId: string,
  roleId: string,
): Promise<void> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireMembers(trx, kind, organizationId, [memberId]);
  if ((await removeLinks(trx, roleLinks(kind, organizationId, memberId), [roleId])) === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'organization role', id: roleId });
  }
}

/** Gives every listed member every listed role; each must be a member already. */
export async function addRolesToMembers(
  trx: Knex.Transaction,
  kind: MemberKind,
  organizationId: string,
  memberIds: string[],
  roleIds: string[],
): Promise<Map<string, string[]>> {
  await getOrganizationForUpdate(trx, organizationId);
  const uniqueMembers = [...new Set(memberIds)];
  await requireMembers(trx, kind, organizationId, uniqueMembers);
  await requireOrganizationRoles(trx, roleIds, roleType[kind]);
  const added = new Map<string, string[]>();
  for (const memberId of uniqueMembers) {
    added.set(memberId, await addLinks(trx, roleLinks(kind, organizationId, memberId), roleIds));
  }
  return added;
}
