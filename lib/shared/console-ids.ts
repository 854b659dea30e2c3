/** Rows seeded by migration 0009. */
export const consoleApp = {
  applicationId: 'console',
  /** The User role that makes a user an administrator (it grants the management API's `all`). */
  roleId: 'console-admin',
} as const;
