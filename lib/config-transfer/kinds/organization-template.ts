import { type Entry, type Kind, number, once, text } from '../kind.ts';
import { linksOf, replaceLinks, rowsOf, upsert } from '../queries.ts';

/** The organization template's permissions (Logto's organization scopes). */
export const organizationScopes: Kind<'organizationScopes'> = {
  list: 'organizationScopes',

  async exported(db) {
    return (await rowsOf(db, 'organization_scopes')).map((row) => ({
      id: String(row.id),
      name: String(row.name),
      description: text(row.description),
      createdAt: number(row.created_at),
    }));
  },

  async imported(trx, entries, progress) {
    for (const scope of entries) {
      await upsert(
        trx,
        'organization_scopes',
        { id: scope.id, name: scope.name, description: scope.description, created_at: scope.createdAt },
        progress,
      );
    }
  },
};

/** The organization template's roles, with their organization scopes and their API resources' scopes. */
export const organizationRoles: Kind<'organizationRoles'> = {
  list: 'organizationRoles',

  async exported(db) {
    const scopes = await linksOf(db, 'organization_role_scopes', 'organization_role_id', 'organization_scope_id');
    const resourceScopes = await linksOf(db, 'organization_role_resource_scopes', 'organization_role_id', 'scope_id');
    return (await rowsOf(db, 'organization_roles')).map((row) => ({
      id: String(row.id),
      name: String(row.name),
      description: text(row.description),
      type: String(row.type) as Entry<'organizationRoles'>['type'],
      createdAt: number(row.created_at),
      organizationScopeIds: scopes.get(String(row.id)) ?? [],
      resourceScopeIds: resourceScopes.get(String(row.id)) ?? [],
    }));
  },

  async imported(trx, entries, progress) {
    for (const role of entries) {
      await upsert(
        trx,
        'organization_roles',
        { id: role.id, name: role.name, description: role.description, type: role.type, created_at: role.createdAt },
        progress,
      );
      const parent = { organization_role_id: role.id };
      await replaceLinks(
        trx,
        'organization_role_scopes',
        parent,
        once(role.organizationScopeIds).map((id) => ({ organization_scope_id: id })),
      );
      await replaceLinks(
        trx,
        'organization_role_resource_scopes',
        parent,
        once(role.resourceScopeIds).map((id) => ({ scope_id: id })),
      );
    }
  },
};
