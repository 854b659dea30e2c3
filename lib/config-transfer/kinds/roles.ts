import { builtIn } from '../file.ts';
import { boolean, type Entry, type Kind, number, once } from '../kind.ts';
import { linksOf, replaceLinks, rowsOf, upsert } from '../queries.ts';

/** Roles with the scopes they grant; the management API's and the console's roles are built in. */
export const roles: Kind<'roles'> = {
  list: 'roles',

  async exported(db) {
    const roleScopes = await linksOf(db, 'roles_scopes', 'role_id', 'scope_id');
    return (await rowsOf(db, 'roles'))
      .filter((row) => !builtIn.roleIds.has(String(row.id)))
      .map((row) => ({
        id: String(row.id),
        name: String(row.name),
        description: String(row.description),
        type: String(row.type) as Entry<'roles'>['type'],
        isDefault: boolean(row.is_default),
        createdAt: number(row.created_at),
        scopeIds: roleScopes.get(String(row.id)) ?? [],
      }));
  },

  async imported(trx, entries, progress) {
    for (const role of entries) {
      await upsert(
        trx,
        'roles',
        {
          id: role.id,
          name: role.name,
          description: role.description,
          type: role.type,
          is_default: role.isDefault,
          created_at: role.createdAt,
        },
        progress,
      );
      await replaceLinks(
        trx,
        'roles_scopes',
        { role_id: role.id },
        once(role.scopeIds).map((scopeId) => ({ scope_id: scopeId })),
      );
    }
  },
};
