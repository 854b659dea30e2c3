import type { Knex } from 'knex';
import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import { entityId } from '../shared/entity-id.ts';
import { getRole, getRoles } from './assignments.ts';
import { idList, type Role } from './schemas.ts';

// Users and machine-to-machine applications hold roles alike, and Logto answers both sides of either
// relation the same way but for the role type each may hold. These are the parts of the two link-set
// declarations (users/role-routes.ts, roles/application-roles-routes.ts) that do not differ.

/** A role as the parent of its holders: read, not locked; each holder is locked as it gets the role. */
export const roleOfHolders = {
  find: (db: Knex, params: { id: string }) => getRole(db, params.id),
  lock: (trx: Knex.Transaction, params: { id: string }) => getRole(trx, params.id),
};

/** The roles of a holder: each must exist (404) and be of a type it may hold (`assertTypes`). */
export const heldRoles = (assertTypes: (roles: Role[]) => void) => ({
  param: 'roleId',
  id: entityId,
  async check(trx: Knex.Transaction, _holder: unknown, body: { roleIds: string[] }) {
    assertTypes(await getRoles(trx, body.roleIds));
    return body.roleIds;
  },
  missing: (id: string) => new RequestError('entity.not_exists_with_id', { entity: 'role', id }),
});

/** Giving roles answers the ids named and those newly held. */
export const assignRoles = (summary: string) => ({
  summary,
  body: idList('roleIds'),
  response: z.object({ roleIds: z.array(z.string()), addedRoleIds: z.array(z.string()) }),
  answer: (body: { roleIds: string[] }, _roleIds: string[], added: string[]) => ({
    roleIds: body.roleIds,
    addedRoleIds: added,
  }),
  status: 201,
  errors: [404, 422],
});
