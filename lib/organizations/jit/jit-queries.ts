import type { Queryable } from '../../storage/database.ts';

/*
 * `organization_jit_email_domains` and `organization_jit_sso_connectors`, read from the other side
 * than the link sets that write them (organizations/links.ts): which organizations admit a user.
 */

export async function organizationIdsByJitEmailDomain(db: Queryable, emailDomain: string): Promise<string[]> {
  return db('organization_jit_email_domains').where({ email_domain: emailDomain }).pluck<string[]>('organization_id');
}

/** Those of `ids` that name an organization (a one-time token may outlive one it names). */
export async function existingOrganizationIds(db: Queryable, ids: string[]): Promise<string[]> {
  return ids.length === 0 ? [] : db('organizations').whereIn('id', ids).pluck<string[]>('id');
}

export async function organizationIdsByJitSsoConnector(db: Queryable, ssoConnectorId: string): Promise<string[]> {
  return db('organization_jit_sso_connectors')
    .where({ sso_connector_id: ssoConnectorId })
    .pluck<string[]>('organization_id');
}
