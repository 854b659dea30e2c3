import type { Knex } from 'knex';

import { addLinks, type Links, linkStore, organizationLinks } from '../links.ts';
import {
  getOrganization,
  getOrganizationForUpdate,
  requireMembers,
  requireOrganizationRoles,
  resolveRoleIds,
} from '../lookups.ts';
import type { OrganizationRoleType } from '../schemas.ts';
import type { MemberKind } from './memberships.ts';

// Users and machine-to-machine applications hold organization roles the same way, each their own type.

const roleType: Record<MemberKind, OrganizationRoleType> = { user: 'User', application: 'MachineToMachine' };

const roleLinks = (kind: MemberKind, organizationId: string, memberId: string): Links =>
  kind === 'user'
    ? organizationLinks.userRoles(organizationId, memberId)
    : organizationLinks.applicationRoles(organizationId, memberId);

/** A member of an organization, the parent of the link set of its organization roles. */
export type Member = { organizationId: string; memberId: string };

/** The organization exists (404) and the member belongs to it (422); a write locks the organization. */
export const memberOf = <Params extends { id: string }>(kind: MemberKind, memberId: (params: Params) => string) => ({
  async find(db: Knex, params: Params): Promise<Member> {
    await getOrganization(db, params.id);
    await requireMembers(db, kind, params.id, [memberId(params)]);
    return { organizationId: params.id, memberId: memberId(params) };
  },
  async lock(trx: Knex.Transaction, params: Params): Promise<Member> {
    await getOrganizationForUpdate(trx, params.id);
    await requireMembers(trx, kind, params.id, [memberId(params)]);
    return { organizationId: params.id, memberId: memberId(params) };
  },
});

export const memberRoleStore = (kind: MemberKind) =>
  linkStore<Member>(({ organizationId, memberId }) => roleLinks(kind, organizationId, memberId));

/** Roles named by id and, for users, by name (Logto's body); they exist and fit the member (422). */
export async function checkMemberRoles(
  trx: Knex.Transaction,
  kind: MemberKind,
  roles: { organizationRoleIds?: string[]; organizationRoleNames?: string[] },
): Promise<string[]> {
  const roleIds = await resolveRoleIds(trx, roles.organizationRoleIds ?? [], roles.organizationRoleNames ?? []);
  await requireOrganizationRoles(trx, roleIds, roleType[kind]);
  return roleIds;
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
