import type { Knex } from 'knex';

import type { Api } from '../http/route.ts';

/** Organizations, their members and roles, organization roles and scopes, invitations. */
export function organizationRoutes(_api: Api, _db: Knex): void {}
