import type { Queryable } from '../../storage/database.ts';

/*
 * `organization_jit_email_domains` and `organization_jit_sso_connectors`, read from the other side
 * than the link sets that write them (organizations/links.ts): which organizations admit a user.
 */

export async function organizationIdsByJitEmailDomain(db: Queryable, emailDomain: string): Promise<string[]> {
  return db('organization_jit_email_domains').where({ email_domain: emailDomain }).pluck<string[]>('organization_id');
}

export async function organizationIdsByJitSsoConnector(db: Queryable, ssoConnectorId: string): Promise<string[]> {
  return db('organization_jit_sso_connectors')
    .where({ sso_connector_id: ssoConnectorId })
    .pluck<string[]>('organization_id');
}
