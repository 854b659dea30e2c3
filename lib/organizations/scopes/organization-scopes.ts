import type { Knex } from 'knex';

import { RequestError } from '../../http/errors.ts';
import { tenantId } from '../../shared/tenant.ts';
import { generateId } from '../../storage/ids.ts';
import { getOrganizationScopeForUpdate } from '../lookups.ts';
import {
  deleteOrganizationScope,
  findOrganizationScopeByName,
  insertOrganizationScope,
  updateOrganizationScope,
} from '../roles/role-queries.ts';
import type { OrganizationScope } from '../schemas.ts';

// Changes to the organization template's scopes, one function each, inside the caller's transaction.

/** Names are unique across the template: 422 entity.unique_integrity_violation, Logto's code for it. */
async function assertScopeNameFree(trx: Knex.Transaction, name: string): Promise<void> {
  if (await findOrganizationScopeByName(trx, name)) {
    throw new RequestError('entity.unique_integrity_violation', {
      reason: `The organization scope name ${name} is already in use.`,
    });
  }
}

export async function createOrganizationScope(
  trx: Knex.Transaction,
  input: { name: string; description?: string | null },
): Promise<OrganizationScope> {
  await assertScopeNameFree(trx, input.name);
  const scope = { tenantId, id: generateId(), name: input.name, description: input.description ?? null };
  await insertOrganizationScope(trx, scope);
  return scope;
}

export async function patchOrganizationScope(
  trx: Knex.Transaction,
  id: string,
  changes: { name?: string; description?: string | null },
): Promise<OrganizationScope> {
  const current = await getOrganizationScopeForUpdate(trx, id);
  if (changes.name !== undefined && changes.name !== current.name) {
    await assertScopeNameFree(trx, changes.name);
  }
  const next = {
    ...current,
    name: changes.name ?? current.name,
    description: changes.description === undefined ? current.description : changes.description,
  };
  await updateOrganizationScope(trx, next);
  return next;
}

/** Roles holding the scope lose it. */
/** Returns what was removed: the data of the OrganizationScope.Deleted event. */
export async function removeOrganizationScope(trx: Knex.Transaction, id: string): Promise<OrganizationScope> {
  const scope = await getOrganizationScopeForUpdate(trx, id);
  await deleteOrganizationScope(trx, id);
  return scope;
}
