import { z } from 'zod';

import { resourceSchema, scopeSchema } from '../resources/schemas.ts';
import { entityId } from '../shared/entity-id.ts';

export const roleTypes = ['User', 'MachineToMachine'] as const;
export type RoleType = (typeof roleTypes)[number];

export const roleSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  name: z.string(),
  description: z.string(),
  type: z.enum(roleTypes),
  isDefault: z.boolean(),
});

export type Role = z.output<typeof roleSchema>;

export const roleListItemSchema = roleSchema.extend({
  usersCount: z.number(),
  featuredUsers: z.array(z.object({ id: z.string(), avatar: z.string().nullable(), name: z.string().nullable() })),
  applicationsCount: z.number(),
  featuredApplications: z.array(z.object({ id: z.string(), name: z.string(), type: z.string() })),
});

export const createRoleBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(128),
  description: z.string().min(1).max(4096),
  type: z.enum(roleTypes).optional(),
  isDefault: z.boolean().optional(),
  scopeIds: z.array(entityId).max(1000).optional(),
});

export const updateRoleBody = z.strictObject({
  name: z.string().min(1).max(128).optional(),
  description: z.string().min(1).max(4096).optional(),
  isDefault: z.boolean().optional(),
});

export const roleScopeSchema = scopeSchema.extend({ resource: resourceSchema });

const ids = z.array(z.string().min(1).max(64)).min(1).max(1000);
export const idList = <N extends string>(name: N) => z.strictObject({ [name]: ids } as Record<N, typeof ids>);
