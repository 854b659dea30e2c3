import { boolean, json, type Kind, number, once, text } from '../kind.ts';
import { linkRows, linksOf, replaceLinks, rowsOf, upsert } from '../queries.ts';

/** Organizations with their member applications (and those applications' roles) and just-in-time settings. */
export const organizations: Kind<'organizations'> = {
  list: 'organizations',

  async exported(db) {
    const members = await linkRows(
      db,
      'organization_applications',
      ['organization_id', 'application_id'],
      'application_id',
    );
    const memberRoles = await linkRows(
      db,
      'organization_application_roles',
      ['organization_id', 'application_id', 'organization_role_id'],
      'organization_role_id',
    );
    const jitDomains = await linkRows(
      db,
      'organization_jit_email_domains',
      ['organization_id', 'email_domain'],
      'email_domain',
    );
    const jitRoles = await linksOf(db, 'organization_jit_roles', 'organization_id', 'organization_role_id');
    const jitSsoConnectors = await linksOf(
      db,
      'organization_jit_sso_connectors',
      'organization_id',
      'sso_connector_id',
    );
    return (await rowsOf(db, 'organizations')).map((row) => {
      const organizationId = String(row.id);
      return {
        id: organizationId,
        name: String(row.name),
        description: text(row.description),
        customData: json(row.custom_data),
        isMfaRequired: boolean(row.is_mfa_required),
        // Null in rows from before the columns: none.
        color: row.color === null ? {} : json(row.color),
        branding: row.branding === null ? {} : json(row.branding),
        customCss: text(row.custom_css),
        createdAt: number(row.created_at),
        applications: members
          .filter((member) => member.organization_id === organizationId)
          .map((member) => ({
            id: String(member.application_id),
            organizationRoleIds: memberRoles
              .filter(
                (held) => held.organization_id === organizationId && held.application_id === member.application_id,
              )
              .map((held) => String(held.organization_role_id)),
          })),
        jit: {
          emailDomains: jitDomains
            .filter((domain) => domain.organization_id === organizationId)
            .map((domain) => String(domain.email_domain)),
          organizationRoleIds: jitRoles.get(organizationId) ?? [],
          ssoConnectorIds: jitSsoConnectors.get(organizationId) ?? [],
        },
      };
    });
  },

  async imported(trx, entries, progress) {
    for (const organization of entries) {
      const parent = { organization_id: organization.id };
      await upsert(
        trx,
        'organizations',
        {
          id: organization.id,
          name: organization.name,
          description: organization.description,
          custom_data: JSON.stringify(organization.customData),
          is_mfa_required: organization.isMfaRequired,
          color: JSON.stringify(organization.color ?? {}),
          branding: JSON.stringify(organization.branding ?? {}),
          custom_css: organization.customCss ?? null,
          created_at: organization.createdAt,
        },
        progress,
      );
      // Member applications' organization roles go with their membership (the foreign key cascades).
      await replaceLinks(
        trx,
        'organization_applications',
        parent,
        organization.applications.map((member) => ({ application_id: member.id })),
      );
      await replaceLinks(
        trx,
        'organization_application_roles',
        parent,
        organization.applications.flatMap((member) =>
          once(member.organizationRoleIds).map((roleId) => ({
            application_id: member.id,
            organization_role_id: roleId,
          })),
        ),
      );
      await replaceLinks(
        trx,
        'organization_jit_email_domains',
        parent,
        once(organization.jit.emailDomains.map((domain) => domain.toLowerCase())).map((domain) => ({
          email_domain: domain,
        })),
      );
      await replaceLinks(
        trx,
        'organization_jit_roles',
        parent,
        once(organization.jit.organizationRoleIds).map((id) => ({ organization_role_id: id })),
      );
      await replaceLinks(
        trx,
        'organization_jit_sso_connectors',
        parent,
        once(organization.jit.ssoConnectorIds).map((id) => ({ sso_connector_id: id })),
      );
    }
  },
};
