/** Rows seeded by migration 0001; the resource's indicator is set from MANAGEMENT_API_RESOURCE at start. */
export const managementApi = {
  resourceId: 'management-api',
  scopeId: 'management-api-all',
  scopeName: 'all',
  roleId: 'management-api-access',
} as const;

/** Who called the management API, as its front door (management/auth.ts) leaves it in `ctx.state.auth`. */
export type ManagementAuth = { clientId?: string; sub?: string };
