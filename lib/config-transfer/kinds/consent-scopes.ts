import type { Entry, Kind } from '../kind.ts';
import { once } from '../kind.ts';
import { replaceLinks } from '../queries.ts';
import { linkRows } from '../queries.ts';

type UserScope = Entry<'applicationConsentScopes'>['userScopes'][number];

/**
 * Third-party applications' user consent scopes, one entry per application that has any; written
 * after the scopes and organization scopes they name. An entry replaces the application's lists.
 */
export const applicationConsentScopes: Kind<'applicationConsentScopes'> = {
  list: 'applicationConsentScopes',

  async exported(db) {
    const [resource, organization, user] = await Promise.all([
      linkRows(db, 'consent_resource_scopes', ['application_id', 'scope_id', 'in_organization'], 'scope_id'),
      linkRows(db, 'consent_organization_scopes', ['application_id', 'organization_scope_id'], 'organization_scope_id'),
      linkRows(db, 'consent_user_scopes', ['application_id', 'scope'], 'scope'),
    ]);
    const entries = new Map<string, Entry<'applicationConsentScopes'>>();
    const entryOf = (applicationId: unknown) => {
      const id = String(applicationId);
      const entry = entries.get(id) ?? {
        applicationId: id,
        organizationScopeIds: [],
        resourceScopeIds: [],
        organizationResourceScopeIds: [],
        userScopes: [],
      };
      entries.set(id, entry);
      return entry;
    };
    for (const row of resource) {
      const entry = entryOf(row.application_id);
      (row.in_organization ? entry.organizationResourceScopeIds : entry.resourceScopeIds).push(String(row.scope_id));
    }
    for (const row of organization) {
      entryOf(row.application_id).organizationScopeIds.push(String(row.organization_scope_id));
    }
    for (const row of user) {
      entryOf(row.application_id).userScopes.push(String(row.scope) as UserScope);
    }
    return [...entries.values()].sort((a, b) => a.applicationId.localeCompare(b.applicationId));
  },

  async imported(trx, entries) {
    for (const entry of entries) {
      const parent = { application_id: entry.applicationId };
      await replaceLinks(trx, 'consent_resource_scopes', parent, [
        ...once(entry.resourceScopeIds).map((id) => ({ scope_id: id, in_organization: false })),
        ...once(entry.organizationResourceScopeIds).map((id) => ({ scope_id: id, in_organization: true })),
      ]);
      await replaceLinks(
        trx,
        'consent_organization_scopes',
        parent,
        once(entry.organizationScopeIds).map((id) => ({ organization_scope_id: id })),
      );
      await replaceLinks(
        trx,
        'consent_user_scopes',
        parent,
        once(entry.userScopes).map((scope) => ({ scope })),
      );
    }
  },
};
