import { z } from 'zod';

import { findApplication } from '../applications/queries.ts';
import { findConnector } from '../connectors/queries.ts';
import { pageOf, paginationQuery, setTotal } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { idParams } from '../shared/entity-id.ts';
import { findSsoConnector } from '../sso/queries.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { assertNotOwnIssuer } from './policy-rules.ts';
import {
  deleteTrustedIssuer,
  findTrustedIssuer,
  findTrustedIssuerForUpdate,
  insertTrustedIssuer,
  listTrustedIssuers,
  updateTrustedIssuer,
} from './queries.ts';
import {
  createTrustedIssuerBody,
  type TrustedIssuer,
  trustedIssuerSchema,
  updateTrustedIssuerBody,
} from './schemas.ts';

const tag = 'Trusted issuers';
const entity = 'trusted issuer';

/** A policy names applications and a connector that exist: a typo would silently trust no one. */
async function assertReferences(db: Queryable, cache: SharedCache, policy: TrustedIssuer): Promise<void> {
  for (const id of policy.applicationIds) {
    if (!(await findApplication(db, id))) {
      throw new RequestError('entity.not_exists_with_id', { entity: 'application', id });
    }
  }
  const { connectorId } = policy.userMapping;
  if (
    connectorId !== undefined &&
    !(await findConnector(db, cache, connectorId)) &&
    !(await findSsoConnector(db, cache, connectorId))
  ) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'connector', id: connectorId });
  }
}

/** Saves; a second policy for the same issuer meets the unique index: 422. */
async function saving(save: () => Promise<void>, issuer: string): Promise<void> {
  try {
    await save();
  } catch (error) {
    throw isUniqueViolation(error)
      ? new RequestError('entity.unique_integrity_violation', {
          reason: `A trusted issuer for ${issuer} already exists.`,
        })
      : error;
  }
}

/** Trust policies for outside issuers (`/api/trusted-issuers`), read by the token endpoint's grants. */
export function trustedIssuerRoutes(api: Api, { db, cache, config }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/trusted-issuers',
      summary: 'List trusted outside issuers',
      tag,
      query: paginationQuery,
      response: z.array(trustedIssuerSchema),
    },
    async ({ query }, ctx) => {
      const all = await listTrustedIssuers(db, cache);
      const page = pageOf(query);
      setTotal(ctx, all.length);
      return page.limit === undefined ? all : all.slice(page.offset, page.offset + page.limit);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/trusted-issuers/:id',
      summary: 'Get a trusted outside issuer',
      tag,
      params: idParams,
      response: trustedIssuerSchema,
      errors: [404],
    },
    async ({ params }) => {
      const policy = await findTrustedIssuer(db, params.id);
      if (!policy) {
        throw new RequestError('entity.not_exists_with_id', { entity, id: params.id });
      }
      return policy;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/trusted-issuers',
      summary:
        'Trust an outside issuer: its JWTs become subject tokens and JWT bearer grants for the listed applications',
      tag,
      body: createTrustedIssuerBody,
      response: trustedIssuerSchema,
      status: 201,
      errors: [404, 422],
    },
    async ({ body }, _ctx, trx) => {
      const policy: TrustedIssuer = {
        id: generateId(),
        ...body,
        applicationIds: [...new Set(body.applicationIds)],
        createdAt: Date.now(),
      };
      assertNotOwnIssuer(policy.issuer, config.issuer);
      await assertReferences(trx, cache, policy);
      await saving(() => insertTrustedIssuer(trx, policy), policy.issuer);
      return policy;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/trusted-issuers/:id',
      summary: 'Update a trusted outside issuer (omitted fields are kept)',
      tag,
      params: idParams,
      body: updateTrustedIssuerBody,
      response: trustedIssuerSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const current = await findTrustedIssuerForUpdate(trx, params.id);
      if (!current) {
        throw new RequestError('entity.not_exists_with_id', { entity, id: params.id });
      }
      const next: TrustedIssuer = {
        ...current,
        ...body,
        applicationIds: body.applicationIds ? [...new Set(body.applicationIds)] : current.applicationIds,
      };
      assertNotOwnIssuer(next.issuer, config.issuer);
      await assertReferences(trx, cache, next);
      await saving(() => updateTrustedIssuer(trx, next), next.issuer);
      return next;
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/trusted-issuers/:id',
      summary: 'Stop trusting an outside issuer (users made for it stay)',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      if ((await deleteTrustedIssuer(trx, params.id)) === 0) {
        throw new RequestError('entity.not_exists_with_id', { entity, id: params.id });
      }
    },
  );
}
