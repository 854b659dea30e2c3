import { z } from 'zod';

import { pageOf, setTotal } from '../http/api/pagination.ts';
import { type Api, queryBoolean, queryList } from '../http/api/route.ts';
import { searchListQuery } from '../http/api/search.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { customDataInput } from '../http/limits.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { assertDeviceFlowUnchanged, assertSettingsFitType, buildApplication } from './applications.ts';
import {
  applicationSearchColumns,
  deleteApplication,
  findApplication,
  findApplicationForUpdate,
  insertApplication,
  isManagementAdmin,
  listApplications,
  setManagementAdmin,
  updateApplication,
} from './queries.ts';
import {
  applicationSchema,
  applicationTypes,
  confidentialTypes,
  createApplicationBody,
  updateApplicationBody,
} from './schemas.ts';
import { insertDefaultSecret } from './secret-queries.ts';

const tag = 'Applications';
const idParams = z.object({ id: z.string().min(1).max(64) });

/** The console's own sign-in application is the service's: changing it could lock administrators out. */
function assertNotInternal(id: string): void {
  if (id === consoleApp.applicationId) {
    throw new RequestError('application.internal_application_violation');
  }
}

export function applicationRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/applications',
      summary: 'List applications',
      tag,
      query: searchListQuery(applicationSearchColumns, {
        // Logto's other types (Protected, SAML) are accepted and match no application here.
        types: queryList(z.enum([...applicationTypes, 'Protected', 'SAML'])).optional(),
        isThirdParty: queryBoolean.optional(),
        excludeRoleId: z.string().min(1).max(64).optional(),
        excludeOrganizationId: z.string().min(1).max(64).optional(),
      }),
      response: z.array(applicationSchema),
    },
    async ({ query }, ctx) => {
      if (query.excludeRoleId !== undefined && query.excludeOrganizationId !== undefined) {
        throw new RequestError(
          'request.invalid_input',
          { details: 'Parameter `excludeRoleId` and `excludeOrganizationId` cannot be used at the same time.' },
          { status: 400 },
        );
      }
      const { items, total } = await listApplications(db, query, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/applications',
      summary: 'Create an application',
      tag,
      body: createApplicationBody,
      response: applicationSchema,
      errors: [422],
    },
    async ({ body }, _ctx, trx) => {
      const application = buildApplication(body);
      await insertApplication(trx, application);
      if (confidentialTypes.has(application.type)) {
        await insertDefaultSecret(trx, application.id);
      }
      return application;
    },
  );

  api.add(
    {
      method: 'get',
      path: '/applications/:id',
      summary: 'Get an application',
      tag,
      params: idParams,
      response: applicationSchema.extend({ isAdmin: z.boolean() }),
      errors: [404],
    },
    async ({ params }) => {
      const application = await findApplication(db, params.id);
      if (!application) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'application', id: params.id });
      }
      return { ...application, isAdmin: await isManagementAdmin(db, application.id) };
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/applications/:id',
      summary: 'Update an application',
      tag,
      params: idParams,
      body: updateApplicationBody,
      response: applicationSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      assertNotInternal(params.id);
      const current = await findApplicationForUpdate(trx, params.id);
      if (!current) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'application', id: params.id });
      }
      // Logto replaces `customClientMetadata` whole (so leaving `isDeviceFlow` out is a change of it).
      const next = {
        ...current,
        ...(body.name !== undefined && { name: body.name }),
        ...(body.description !== undefined && { description: body.description }),
        ...(body.customData && { customData: body.customData }),
        oidcClientMetadata: { ...current.oidcClientMetadata, ...body.oidcClientMetadata },
        customClientMetadata: body.customClientMetadata ?? current.customClientMetadata,
      };
      assertSettingsFitType(next, next.customClientMetadata);
      assertDeviceFlowUnchanged(current.customClientMetadata, next.customClientMetadata);
      await updateApplication(trx, next);
      if (body.isAdmin !== undefined) {
        if (body.isAdmin && current.type !== 'MachineToMachine') {
          throw new RequestError('application.invalid_type');
        }
        await setManagementAdmin(trx, current.id, body.isAdmin);
      }
      return next;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/applications/:id/custom-data',
      summary: "Merge keys into an application's custom data",
      tag,
      params: idParams,
      body: customDataInput,
      response: z.record(z.string(), z.unknown()),
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      assertNotInternal(params.id);
      const current = await findApplicationForUpdate(trx, params.id);
      if (!current) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'application', id: params.id });
      }
      // Logto's merge: top-level keys of the body replace the stored ones, the others stay.
      const customData = { ...current.customData, ...body };
      await updateApplication(trx, { ...current, customData });
      return customData;
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/applications/:id',
      summary: 'Delete an application',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      assertNotInternal(params.id);
      if (!(await deleteApplication(trx, params.id))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'application', id: params.id });
      }
    },
  );
}
