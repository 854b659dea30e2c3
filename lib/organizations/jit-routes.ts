import type { Knex } from 'knex';
import { z } from 'zod';

import { tenantId } from '../shared/tenant.ts';
import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import { listSsoConnectors, toSsoConnector } from '../sso/queries.ts';
import { ssoConnectorSchema } from '../sso/schemas.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import {
  addJitEmailDomain,
  addJitRoles,
  addJitSsoConnectors,
  removeJitEmailDomain,
  removeJitRole,
  removeJitSsoConnector,
  replaceJitEmailDomains,
  replaceJitRoles,
  replaceJitSsoConnectors,
} from './jit.ts';
import { linkedIds, organizationLinks, pageOfLinkedIds } from './links.ts';
import { getOrganization } from './lookups.ts';
import { listOrganizationRoles } from './role-queries.ts';
import { emailDomain, idArray, jitEmailDomainSchema, nonEmptyIdArray, organizationRoleSchema } from './schemas.ts';

const tag = 'Organization JIT';
const idParams = z.object({ id: z.string().min(1).max(21) });

/** Just-in-time provisioning: the e-mail domains whose users join on sign-up, and the roles they get. */
export function jitRoutes(api: Api, db: Knex, cache: SharedCache): void {
  api.add(
    {
      method: 'get',
      path: '/organizations/:id/jit/email-domains',
      summary: 'List the JIT e-mail domains of an organization',
      tag,
      params: idParams,
      query: paginationQuery,
      response: z.array(jitEmailDomainSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getOrganization(db, params.id);
      const { ids, total } = await pageOfLinkedIds(db, organizationLinks.jitEmailDomains(params.id), pageOf(query));
      setTotal(ctx, total);
      return ids.map((domain) => ({ tenantId, organizationId: params.id, emailDomain: domain }));
    },
  );

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

  api.add(
    {
      method: 'put',
      path: '/organizations/:id/jit/email-domains',
      summary: 'Replace the JIT e-mail domains of an organization',
      tag,
      params: idParams,
      body: z.strictObject({ emailDomains: z.array(emailDomain).max(1000) }),
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      await replaceJitEmailDomains(trx, params.id, body.emailDomains);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id/jit/email-domains/:emailDomain',
      summary: 'Remove a JIT e-mail domain from an organization',
      tag,
      params: idParams.extend({
        emailDomain: z
          .string()
          .min(1)
          .max(128)
          .transform((value) => value.toLowerCase()),
      }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await removeJitEmailDomain(trx, params.id, params.emailDomain);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/organizations/:id/jit/roles',
      summary: 'List the organization roles users get when they join by JIT provisioning',
      tag,
      params: idParams,
      query: paginationQuery,
      response: z.array(organizationRoleSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getOrganization(db, params.id);
      const ids = await linkedIds(db, organizationLinks.jitRoles(params.id));
      const { items, total } = await listOrganizationRoles(db, { ids }, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/jit/roles',
      summary: 'Add JIT organization roles (roles in the set already are ignored)',
      tag,
      params: idParams,
      body: z.strictObject({ organizationRoleIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await addJitRoles(trx, params.id, body.organizationRoleIds);
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organizations/:id/jit/roles',
      summary: 'Replace the JIT organization roles',
      tag,
      params: idParams,
      body: z.strictObject({ organizationRoleIds: idArray }),
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await replaceJitRoles(trx, params.id, body.organizationRoleIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id/jit/roles/:organizationRoleId',
      summary: 'Remove a JIT organization role',
      tag,
      params: idParams.extend({ organizationRoleId: z.string().min(1).max(21) }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await removeJitRole(trx, params.id, params.organizationRoleId);
    },
  );

  const ssoConnectorIds = z.strictObject({ ssoConnectorIds: nonEmptyIdArray });

  api.add(
    {
      method: 'get',
      path: '/organizations/:id/jit/sso-connectors',
      summary: 'List the enterprise SSO connectors whose users join the organization as they sign in',
      tag,
      params: idParams,
      query: paginationQuery,
      response: z.array(
        ssoConnectorSchema.omit({ name: true, providerType: true, providerLogo: true, providerLogoDark: true }),
      ),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getOrganization(db, params.id);
      const { ids, total } = await pageOfLinkedIds(db, organizationLinks.jitSsoConnectors(params.id), pageOf(query));
      setTotal(ctx, total);
      const connectors = await listSsoConnectors(db, cache);
      return ids.flatMap((id) => connectors.filter((connector) => connector.id === id).map(toSsoConnector));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/jit/sso-connectors',
      summary: 'Add JIT enterprise SSO connectors (ones in the set already are ignored)',
      tag,
      params: idParams,
      body: ssoConnectorIds,
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await addJitSsoConnectors(trx, params.id, body.ssoConnectorIds);
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organizations/:id/jit/sso-connectors',
      summary: 'Replace the JIT enterprise SSO connectors',
      tag,
      params: idParams,
      body: z.strictObject({ ssoConnectorIds: idArray }),
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await replaceJitSsoConnectors(trx, params.id, body.ssoConnectorIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id/jit/sso-connectors/:ssoConnectorId',
      summary: 'Remove a JIT enterprise SSO connector',
      tag,
      params: idParams.extend({ ssoConnectorId: z.string().min(1).max(21) }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await removeJitSsoConnector(trx, params.id, params.ssoConnectorId);
    },
  );
}
