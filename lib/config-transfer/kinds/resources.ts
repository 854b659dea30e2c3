import { builtIn } from '../file.ts';
import { boolean, type Entry, type Kind, number, text } from '../kind.ts';
import { deleteOthers, rowsOf, updateOthers, upsert } from '../queries.ts';

/** API resources with their scopes (permissions); the management API is built in. */
export const resources: Kind<'resources'> = {
  list: 'resources',

  async exported(db) {
    const scopesByResource = new Map<string, Entry<'resources'>['scopes']>();
    for (const row of await rowsOf(db, 'scopes')) {
      if (builtIn.scopeIds.has(String(row.id))) continue;
      const list = scopesByResource.get(String(row.resource_id)) ?? [];
      list.push({
        id: String(row.id),
        name: String(row.name),
        description: text(row.description),
        createdAt: number(row.created_at),
      });
      scopesByResource.set(String(row.resource_id), list);
    }
    return (await rowsOf(db, 'resources'))
      .filter((row) => !builtIn.resourceIds.has(String(row.id)))
      .map((row) => ({
        id: String(row.id),
        name: String(row.name),
        indicator: String(row.indicator),
        isDefault: boolean(row.is_default),
        accessTokenTtl: number(row.access_token_ttl),
        isExchangeTarget: boolean(row.is_exchange_target),
        createdAt: number(row.created_at),
        scopes: scopesByResource.get(String(row.id)) ?? [],
      }));
  },

  async imported(trx, entries, progress) {
    for (const resource of entries) {
      await upsert(
        trx,
        'resources',
        {
          id: resource.id,
          name: resource.name,
          indicator: resource.indicator,
          is_default: resource.isDefault,
          access_token_ttl: resource.accessTokenTtl,
          is_exchange_target: resource.isExchangeTarget,
          created_at: resource.createdAt,
        },
        progress,
      );
      await deleteOthers(
        trx,
        'scopes',
        { resource_id: resource.id },
        resource.scopes.map((scope) => scope.id),
      );
      for (const scope of resource.scopes) {
        await upsert(
          trx,
          'scopes',
          {
            id: scope.id,
            resource_id: resource.id,
            name: scope.name,
            description: scope.description,
            created_at: scope.createdAt,
          },
          progress,
        );
      }
    }
    const defaultResource = entries.find((resource) => resource.isDefault);
    if (defaultResource) {
      await updateOthers(trx, 'resources', defaultResource.id, { is_default: false });
    }
  },
};
