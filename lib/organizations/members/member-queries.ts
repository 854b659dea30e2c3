import { tenantId } from '../../shared/tenant.ts';
import type { Queryable } from '../../storage/database.ts';
import { listPage, type Page, whereContains } from '../../storage/list.ts';
import { toUser, type UserRow } from '../../users/queries.ts';
import type { User } from '../../users/schemas.ts';
import type { OrganizationScope, RoleReference } from '../schemas.ts';

type MemberKind = 'user' | 'application';

const memberTables = {
  user: { members: 'organization_users', roles: 'organization_user_roles', column: 'user_id' },
  application: {
    members: 'organization_applications',
    roles: 'organization_application_roles',
    column: 'application_id',
  },
} as const;

export async function memberIds(db: Queryable, kind: MemberKind, organizationId: string): Promise<string[]> {
  const { members, column } = memberTables[kind];
  return db(members).where({ organization_id: organizationId }).pluck(column);
}

export type MemberFilter = { search?: string; organizationRoleId?: string };

/**
 * A page of an organization's user members, newest first. Membership is a subquery, not a list of
 * ids, so an organization of any size lists in one statement. `search` matches what the user list's does.
 */
export async function listMemberUsers(
  db: Queryable,
  organizationId: string,
  filter: MemberFilter,
  page: Page,
): Promise<{ items: User[]; total: number }> {
  const query = db('users')
    .whereIn('id', db('organization_users').where({ organization_id: organizationId }).select('user_id'))
    .select('*');
  if (filter.organizationRoleId) {
    const holders = db('organization_user_roles').where({
      organization_id: organizationId,
      organization_role_id: filter.organizationRoleId,
    });
    query.whereIn('id', holders.select('user_id'));
  }
  if (filter.search) {
    whereContains(query, ['id', 'username', 'primary_email', 'primary_phone', 'name'], filter.search);
  }
  const { rows, total } = await listPage<UserRow>(query, page);
  return { items: rows.map(toUser), total };
}

/** The organization roles (`{id, name}`) each of the given members holds in the organization. */
export async function rolesOfMembers(
  db: Queryable,
  kind: MemberKind,
  organizationId: string,
  ids: string[],
): Promise<Map<string, RoleReference[]>> {
  const { roles, column } = memberTables[kind];
  const rows = await db(roles)
    .join('organization_roles', 'organization_roles.id', `${roles}.organization_role_id`)
    .where(`${roles}.organization_id`, organizationId)
    .whereIn(`${roles}.${column}`, ids)
    .orderBy('organization_roles.name')
    .select<Array<{ member_id: string; id: string; name: string }>>(
      `${roles}.${column} as member_id`,
      'organization_roles.id',
      'organization_roles.name',
    );
  const byMember = new Map<string, RoleReference[]>();
  for (const { member_id: memberId, ...role } of rows) {
    byMember.set(memberId, [...(byMember.get(memberId) ?? []), role]);
  }
  return byMember;
}

export async function organizationIdsOfMember(db: Queryable, kind: MemberKind, id: string): Promise<string[]> {
  const { members, column } = memberTables[kind];
  return db(members)
    .where({ [column]: id })
    .pluck('organization_id');
}

/** The organization scopes a user holds in an organization through their organization roles. */
export async function scopesOfMember(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<OrganizationScope[]> {
  const rows = await db('organization_user_roles')
    .join(
      'organization_role_scopes',
      'organization_role_scopes.organization_role_id',
      'organization_user_roles.organization_role_id',
    )
    .join('organization_scopes', 'organization_scopes.id', 'organization_role_scopes.organization_scope_id')
    .where({ 'organization_user_roles.organization_id': organizationId, 'organization_user_roles.user_id': userId })
    .distinct('organization_scopes.id', 'organization_scopes.name', 'organization_scopes.description')
    .orderBy('organization_scopes.name');
  return (rows as Array<{ id: string; name: string; description: string | null }>).map((row) => ({ tenantId, ...row }));
}

/** Whether a user with this e-mail (whatever its case) is a member already. */
export async function isMemberByEmail(db: Queryable, organizationId: string, email: string): Promise<boolean> {
  const row = await db('organization_users')
    .join('users', 'users.id', 'organization_users.user_id')
    .where({ 'organization_users.organization_id': organizationId, 'users.email_key': email.toLowerCase() })
    .first<{ id: string } | undefined>('users.id');
  return row !== undefined;
}

/** Whether the user belongs to an organization that asks every member for a second factor. */
export async function isMemberOfMfaOrganization(db: Queryable, userId: string): Promise<boolean> {
  const row = await db('organization_users')
    .join('organizations', 'organizations.id', 'organization_users.organization_id')
    .where({ 'organization_users.user_id': userId, 'organizations.is_mfa_required': true })
    .first<{ id: string } | undefined>('organizations.id');
  return row !== undefined;
}
