import type { Context } from 'koa';

import { enqueueEvent } from '../hooks/outbox.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { addLinks, linkedIds, organizationLinks } from './links.ts';

/**
 * Just-in-time membership: a user whose verified email is in an organization's JIT domains joins it
 * with the organization's JIT roles, in the caller's transaction, each join an
 * `Organization.Membership.Updated` event. Returns the organizations joined.
 */
export async function provisionByEmailDomain(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  userId: string,
  email: string,
): Promise<string[]> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const organizationIds: string[] = await trx('organization_jit_email_domains').where({ email_domain: domain }).pluck('organization_id');
  const joined: string[] = [];
  for (const organizationId of organizationIds) {
    const added = await addLinks(trx, organizationLinks.users(organizationId), [userId]);
    if (added.length === 0) {
      continue;
    }
    await addLinks(trx, organizationLinks.userRoles(organizationId, userId), await linkedIds(trx, organizationLinks.jitRoles(organizationId)));
    await enqueueEvent(trx, cache, 'Organization.Membership.Updated', {
      organizationId,
      addedUserIds: [userId],
      path: ctx.path,
      method: ctx.method,
      ip: ctx.ip,
      userAgent: ctx.get('user-agent'),
    });
    joined.push(organizationId);
  }
  return joined;
}
