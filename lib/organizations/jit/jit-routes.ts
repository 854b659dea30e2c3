import type { Knex } from 'knex';
import { z } from 'zod';

import { linkSetRoutes } from '../../http/api/link-set-routes.ts';
import { pageOf, paginationQuery } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { entityId, idParams } from '../../shared/entity-id.ts';
import { tenantId } from '../../shared/tenant.ts';
import { listSsoConnectors, toSsoConnector } from '../../sso/queries.ts';
import { ssoConnectorSchema } from '../../sso/schemas.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { linkedIds, linkStore, organizationLinks, pageOfLinkedIds } from '../links.ts';
import { organizationParent, requireOrganizationRoles } from '../lookups.ts';
import { listOrganizationRoles } from '../roles/role-queries.ts';
import {
  emailDomain,
  idArray,
  jitEmailDomainSchema,
  nonEmptyIdArray,
  type Organization,
  organizationRoleSchema,
} from '../schemas.ts';
import { addJitEmailDomain, requireSsoConnectors } from './jit.ts';

const tag = 'Organization JIT';

/** Just-in-time provisioning: the e-mail domains whose users join on sign-up, and the roles they get. */
export function jitRoutes(api: Api, db: Knex, cache: SharedCache): void {
  linkSetRoutes(api, db, {
    tag,
    path: '/organizations/:id/jit/email-domains',
    params: idParams,
    parent: organizationParent,
    child: {
      param: 'emailDomain',
      id: z
        .string()
        .min(1)
        .max(128)
        .transform((value) => value.toLowerCase()),
      check: (_trx, _organization, body) => body.emailDomains,
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'email domain', id }),
    },
    store: linkStore(({ id }: Organization) => organizationLinks.jitEmailDomains(id)),
    list: {
      summary: 'List the JIT e-mail domains of an organization',
      query: paginationQuery,
      response: z.array(jitEmailDomainSchema),
      errors: [404],
      async page(db, organization, query) {
        const { ids, total } = await pageOfLinkedIds(
          db,
          organizationLinks.jitEmailDomains(organization.id),
          pageOf(query),
        );
        return {
          items: ids.map((domain) => ({ tenantId, organizationId: organization.id, emailDomain: domain })),
          total,
        };
      },
    },
    // Added one at a time, below: a domain already in the set is an error, as in Logto.
    replace: {
      summary: 'Replace the JIT e-mail domains of an organization',
      body: z.strictObject({ emailDomains: z.array(emailDomain).max(1000) }),
      errors: [404],
    },
    remove: { summary: 'Remove a JIT e-mail domain from an organization', errors: [404] },
  });

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/jit/email-domains',
      summary: 'Add a JIT e-mail domain to an organization',
      tag,
      params: idParams,
      body: z.strictObject({ emailDomain }),
      response: jitEmailDomainSchema,
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => addJitEmailDomain(trx, params.id, body.emailDomain),
  );

  linkSetRoutes(api, db, {
    tag,
    path: '/organizations/:id/jit/roles',
    params: idParams,
    parent: organizationParent,
    child: {
      param: 'organizationRoleId',
      id: entityId,
      // JIT roles go to users, so they are User roles.
      check: async (trx, _organization, body) => {
        await requireOrganizationRoles(trx, body.organizationRoleIds, 'User');
        return body.organizationRoleIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'organization role', id }),
    },
    store: linkStore(({ id }: Organization) => organizationLinks.jitRoles(id)),
    list: {
      summary: 'List the organization roles users get when they join by JIT provisioning',
      query: paginationQuery,
      response: z.array(organizationRoleSchema),
      errors: [404],
      async page(db, organization, query) {
        const ids = await linkedIds(db, organizationLinks.jitRoles(organization.id));
        return listOrganizationRoles(db, { ids }, pageOf(query));
      },
    },
    add: {
      summary: 'Add JIT organization roles (roles in the set already are ignored)',
      body: z.strictObject({ organizationRoleIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the JIT organization roles',
      body: z.strictObject({ organizationRoleIds: idArray }),
      errors: [404, 422],
    },
    remove: { summary: 'Remove a JIT organization role', errors: [404] },
  });

  linkSetRoutes(api, db, {
    tag,
    path: '/organizations/:id/jit/sso-connectors',
    params: idParams,
    parent: organizationParent,
    child: {
      param: 'ssoConnectorId',
      id: entityId,
      check: async (trx, _organization, body) => {
        await requireSsoConnectors(trx, body.ssoConnectorIds);
        return body.ssoConnectorIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'SSO connector', id }),
    },
    store: linkStore(({ id }: Organization) => organizationLinks.jitSsoConnectors(id)),
    list: {
      summary: 'List the enterprise SSO connectors whose users join the organization as they sign in',
      query: paginationQuery,
      response: z.array(ssoConnectorSchema),
      errors: [404],
      async page(db, organization, query) {
        const { ids, total } = await pageOfLinkedIds(
          db,
          organizationLinks.jitSsoConnectors(organization.id),
          pageOf(query),
        );
        const connectors = await listSsoConnectors(db, cache);
        const items = ids.flatMap((id) => connectors.filter((connector) => connector.id === id).map(toSsoConnector));
        return { items, total };
      },
    },
    add: {
      summary: 'Add JIT enterprise SSO connectors (ones in the set already are ignored)',
      body: z.strictObject({ ssoConnectorIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the JIT enterprise SSO connectors',
      body: z.strictObject({ ssoConnectorIds: idArray }),
      errors: [404, 422],
    },
    remove: { summary: 'Remove a JIT enterprise SSO connector', errors: [404] },
  });
}
