import { z } from 'zod';

import { applicationSearchColumns, listApplications } from '../applications/queries.ts';
import { applicationSchema } from '../applications/schemas.ts';
import { linkSetRoutes } from '../http/api/link-set-routes.ts';
import { pageOf } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import { searchListQuery } from '../http/api/search.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { entityId, idParams } from '../shared/entity-id.ts';
import {
  addRolesToApplication,
  assertMachineToMachineRoles,
  getRoleHolderApplication,
  getRoleHolderApplicationForUpdate,
} from './assignments.ts';
import { assignRoles, heldRoles, roleOfHolders } from './held-roles.ts';
import {
  applicationIdsOfRole,
  listRoles,
  removeApplicationRoles,
  roleIdsOfApplication,
  roleSearchColumns,
} from './queries.ts';
import { idList, roleSchema } from './schemas.ts';

const tag = 'Roles';
const applicationParams = z.object({ applicationId: z.string().min(1).max(64) });

/** Role ↔ machine-to-machine application assignments, from either side. */
export function applicationRoleRoutes(api: Api, { db }: ServiceContext): void {
  linkSetRoutes(api, db, {
    tag,
    path: '/roles/:id/applications',
    params: idParams,
    parent: roleOfHolders,
    child: {
      param: 'applicationId',
      id: z.string().min(1).max(64),
      check: (_trx, role, body) => {
        assertMachineToMachineRoles([role]);
        return body.applicationIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'application', id }),
    },
    store: {
      ids: (db, role) => applicationIdsOfRole(db, role.id),
      // Unlike an application's roles, an application holding the role already is an error (Logto's answer).
      async add(trx, role, applicationIds) {
        const unique = [...new Set(applicationIds)];
        for (const applicationId of unique) {
          await getRoleHolderApplicationForUpdate(trx, applicationId);
          if ((await roleIdsOfApplication(trx, applicationId)).includes(role.id)) {
            throw new RequestError('role.application_exists', { applicationId });
          }
          await addRolesToApplication(trx, applicationId, [role.id]);
        }
        return unique;
      },
      async remove(trx, role, applicationIds) {
        let removed = 0;
        for (const applicationId of applicationIds) {
          removed += await removeApplicationRoles(trx, applicationId, [role.id]);
        }
        return removed;
      },
    },
    list: {
      summary: 'List the applications holding a role',
      query: searchListQuery(applicationSearchColumns, {}),
      response: z.array(applicationSchema),
      errors: [404],
      page: async (db, role, query) =>
        listApplications(db, { ids: await applicationIdsOfRole(db, role.id), search: query.search }, pageOf(query)),
    },
    add: { summary: 'Assign a role to applications', body: idList('applicationIds'), status: 201, errors: [404, 422] },
    remove: { summary: 'Remove a role from an application', errors: [404] },
  });

  linkSetRoutes(api, db, {
    tag,
    path: '/applications/:applicationId/roles',
    params: applicationParams,
    parent: {
      find: (db, params) => getRoleHolderApplication(db, params.applicationId),
      lock: (trx, params) => getRoleHolderApplicationForUpdate(trx, params.applicationId),
    },
    child: heldRoles(assertMachineToMachineRoles),
    store: {
      ids: (db, application) => roleIdsOfApplication(db, application.id),
      add: (trx, application, roleIds) => addRolesToApplication(trx, application.id, roleIds),
      remove: (trx, application, roleIds) => removeApplicationRoles(trx, application.id, roleIds),
    },
    list: {
      summary: 'List the roles of an application',
      query: searchListQuery(roleSearchColumns, {}),
      response: z.array(roleSchema),
      errors: [404, 422],
      page: async (db, application, query) =>
        listRoles(db, { ids: await roleIdsOfApplication(db, application.id), search: query.search }, pageOf(query)),
    },
    add: assignRoles('Assign roles to an application (roles it holds already are ignored)'),
    replace: {
      summary: 'Replace the roles of an application',
      body: z.strictObject({ roleIds: z.array(entityId).max(1000) }),
      // Logto answers 200 with no content here, unlike the 204 of its other replacements.
      status: 200,
      errors: [404, 422],
    },
    remove: { summary: 'Remove a role from an application', errors: [404, 422] },
  });
}
