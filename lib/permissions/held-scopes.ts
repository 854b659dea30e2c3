import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { readApplicationScopes, readUserScopes } from './queries.ts';

/**
 * The one permission model: which scope names a subject holds on an API resource. Answers are
 * cached under `roles`, which every change to roles, their scopes, their holders and organization
 * roles bumps, so the next token request after a change sees it.
 */

export const scopesHeldByApplication = (db: Queryable, cache: SharedCache, applicationId: string, resourceId: string) =>
  cache.get('roles', `application:${applicationId}:${resourceId}`, () =>
    readApplicationScopes(db, applicationId, resourceId),
  );

/**
 * A user holds a scope through a role of theirs, or through an organization role they hold in an
 * organization. With `organizationId`, only that organization's roles count (an organization token).
 */
export const scopesHeldByUser = (
  db: Queryable,
  cache: SharedCache,
  userId: string,
  resourceId: string,
  organizationId?: string,
) =>
  cache.get('roles', `user:${userId}:${resourceId}:${organizationId ?? ''}`, () =>
    readUserScopes(db, userId, resourceId, organizationId),
  );
