import type { Queryable } from '../../storage/database.ts';
import type { AssignConsentScopes, ConsentScopes, ConsentScopeType } from './consent-scope-schemas.ts';

/*
 * `consent_resource_scopes`, `consent_organization_scopes`,
 * `consent_user_scopes`: what a third-party application's consent page may ask for.
 */

type ResourceScopeRow = {
  resource_id: string;
  resource_name: string;
  indicator: string;
  id: string;
  name: string;
  description: string | null;
};

/** The ids among `ids` that name a resource scope. */
export async function existingScopeIds(db: Queryable, ids: string[]): Promise<Set<string>> {
  return new Set(ids.length === 0 ? [] : ((await db('scopes').whereIn('id', ids).pluck('id')) as string[]));
}

/** The ids among `ids` that name an organization scope. */
export async function existingOrganizationScopeIds(db: Queryable, ids: string[]): Promise<Set<string>> {
  return new Set(
    ids.length === 0 ? [] : ((await db('organization_scopes').whereIn('id', ids).pluck('id')) as string[]),
  );
}

/** Adds what is not there yet; what is there already stays (assigning twice is not an error, as in Logto). */
export async function addConsentScopes(
  db: Queryable,
  applicationId: string,
  scopes: AssignConsentScopes,
): Promise<void> {
  const resourceRows = [
    ...(scopes.resourceScopes ?? []).map((id) => ({ scope_id: id, in_organization: false })),
    ...(scopes.organizationResourceScopes ?? []).map((id) => ({ scope_id: id, in_organization: true })),
  ].map((row) => ({ application_id: applicationId, ...row }));
  const inserts: Array<[string, Array<Record<string, unknown>>]> = [
    ['consent_resource_scopes', resourceRows],
    [
      'consent_organization_scopes',
      (scopes.organizationScopes ?? []).map((id) => ({ application_id: applicationId, organization_scope_id: id })),
    ],
    ['consent_user_scopes', (scopes.userScopes ?? []).map((scope) => ({ application_id: applicationId, scope }))],
  ];
  for (const [table, rows] of inserts) {
    if (rows.length > 0) {
      await db(table).insert(rows).onConflict().ignore();
    }
  }
}

function byResource(rows: ResourceScopeRow[]): ConsentScopes['resourceScopes'] {
  const resources = new Map<string, ConsentScopes['resourceScopes'][number]>();
  for (const row of rows) {
    const entry = resources.get(row.resource_id) ?? {
      resource: { id: row.resource_id, name: row.resource_name, indicator: row.indicator },
      scopes: [],
    };
    entry.scopes.push({ id: row.id, name: row.name, description: row.description });
    resources.set(row.resource_id, entry);
  }
  return [...resources.values()];
}

async function resourceScopesOf(db: Queryable, applicationId: string, inOrganization: boolean) {
  const rows = await db('consent_resource_scopes as c')
    .join('scopes as s', 's.id', 'c.scope_id')
    .join('resources as r', 'r.id', 's.resource_id')
    .where({ 'c.application_id': applicationId, 'c.in_organization': inOrganization })
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }, { column: 's.created_at' }, { column: 's.id' }])
    .select<ResourceScopeRow[]>(
      'r.id as resource_id',
      'r.name as resource_name',
      'r.indicator',
      's.id',
      's.name',
      's.description',
    );
  return byResource(rows);
}

export async function consentScopesOf(db: Queryable, applicationId: string): Promise<ConsentScopes> {
  const [organizationScopes, resourceScopes, organizationResourceScopes, userScopes] = await Promise.all([
    db('consent_organization_scopes as c')
      .join('organization_scopes as s', 's.id', 'c.organization_scope_id')
      .where({ 'c.application_id': applicationId })
      .orderBy([{ column: 's.created_at' }, { column: 's.id' }])
      .select<Array<{ id: string; name: string; description: string | null }>>('s.id', 's.name', 's.description'),
    resourceScopesOf(db, applicationId, false),
    resourceScopesOf(db, applicationId, true),
    db('consent_user_scopes').where({ application_id: applicationId }).orderBy('scope').pluck('scope') as Promise<
      ConsentScopes['userScopes']
    >,
  ]);
  return { organizationScopes, resourceScopes, organizationResourceScopes, userScopes };
}

/** Whether there was such a consent scope to delete. */
export async function deleteConsentScope(
  db: Queryable,
  applicationId: string,
  type: ConsentScopeType,
  scopeId: string,
): Promise<boolean> {
  const deleted =
    type === 'user-scopes'
      ? db('consent_user_scopes').where({ application_id: applicationId, scope: scopeId })
      : type === 'organization-scopes'
        ? db('consent_organization_scopes').where({
            application_id: applicationId,
            organization_scope_id: scopeId,
          })
        : db('consent_resource_scopes').where({
            application_id: applicationId,
            scope_id: scopeId,
            in_organization: type === 'organization-resource-scopes',
          });
  return (await deleted.delete()) > 0;
}

/** A resource scope by its API and name, as a grant names it. */
export const resourceScopeKey = (resourceId: string, name: string) => `${resourceId} ${name}`;

/** A third-party application's consent scopes as a grant is checked against them. */
export type ConsentAllowance = {
  userScopes: Set<string>;
  /** By `resourceScopeKey`: for an API alone or within an organization. */
  resourceScopes: Set<string>;
  /** Organization scopes by name. */
  organizationScopes: Set<string>;
};

export async function consentAllowanceOf(db: Queryable, applicationId: string): Promise<ConsentAllowance> {
  const [user, resource, organization] = await Promise.all([
    db('consent_user_scopes').where({ application_id: applicationId }).pluck('scope') as Promise<string[]>,
    db('consent_resource_scopes as c')
      .join('scopes as s', 's.id', 'c.scope_id')
      .where({ 'c.application_id': applicationId })
      .select<Array<{ resource_id: string; name: string }>>('s.resource_id', 's.name'),
    db('consent_organization_scopes as c')
      .join('organization_scopes as s', 's.id', 'c.organization_scope_id')
      .where({ 'c.application_id': applicationId })
      .pluck('s.name') as Promise<string[]>,
  ]);
  return {
    userScopes: new Set(user),
    resourceScopes: new Set(resource.map((row) => resourceScopeKey(row.resource_id, row.name))),
    organizationScopes: new Set(organization),
  };
}
