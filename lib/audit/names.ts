import type { Knex } from 'knex';

/** Where an id found in the audit log may name something, and the column that names it. */
const namedTables: Array<{ table: string; name: string }> = [
  { table: 'applications', name: 'name' },
  { table: 'roles', name: 'name' },
  { table: 'resources', name: 'name' },
  { table: 'scopes', name: 'name' },
  { table: 'organizations', name: 'name' },
  { table: 'organization_roles', name: 'name' },
  { table: 'organization_scopes', name: 'name' },
  { table: 'hooks', name: 'name' },
  { table: 'sso_connectors', name: 'connector_name' },
];

type UserRow = {
  id: string;
  username: string | null;
  name: string | null;
  primary_email: string | null;
  primary_phone: string | null;
};

/**
 * The current names of the given ids (users by username, else name, email or phone; other entities
 * by their name), for the people reading the log. An id of something since deleted has none.
 */
export async function currentNames(db: Knex, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (ids.length === 0) {
    return names;
  }
  const [users, ...others] = await Promise.all([
    db('users').whereIn('id', ids).select<UserRow[]>('id', 'username', 'name', 'primary_email', 'primary_phone'),
    ...namedTables.map(({ table, name }) =>
      db(table).whereIn('id', ids).select<Array<{ id: string; name: string }>>('id', { name }),
    ),
  ]);
  for (const user of users) {
    const name = user.username ?? user.name ?? user.primary_email ?? user.primary_phone;
    if (name) {
      names.set(user.id, name);
    }
  }
  for (const rows of others) {
    for (const row of rows) {
      if (row.name) {
        names.set(row.id, row.name);
      }
    }
  }
  return names;
}
