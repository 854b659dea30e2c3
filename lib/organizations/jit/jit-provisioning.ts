import type { Context } from 'koa';

import { outboxEffects } from '../../hooks/effects.ts';
import { byUser, requestOf } from '../../hooks/payloads.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { addLinks, linkedIds, organizationLinks } from '../links.ts';
import { deltaOf } from '../members/memberships.ts';
import {
  existingOrganizationIds,
  organizationIdsByJitEmailDomain,
  organizationIdsByJitSsoConnector,
} from './jit-queries.ts';

/**
 * Just-in-time membership: a user joins each of the organizations with the organization's JIT roles,
 * in the caller's transaction, each join an `Organization.Membership.Updated` event. Returns the
 * organizations joined (not those the user was a member of already).
 */
async function provision(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  userId: string,
  organizationIds: string[],
): Promise<string[]> {
  const joined: string[] = [];
  for (const organizationId of organizationIds) {
    const added = await addLinks(trx, organizationLinks.users(organizationId), [userId]);
    if (added.length === 0) {
      continue;
    }
    await addLinks(
      trx,
      organizationLinks.userRoles(organizationId, userId),
      await linkedIds(trx, organizationLinks.jitRoles(organizationId)),
    );
    await outboxEffects(trx, cache, byUser(requestOf(ctx), userId)).emit('Organization.Membership.Updated', {
      membership: deltaOf(organizationId, { addedUserIds: [userId] }),
    });
    joined.push(organizationId);
  }
  return joined;
}

/** A verified email (at registration or when linked) in an organization's JIT email domains. */
export async function provisionByEmailDomain(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  userId: string,
  email: string,
): Promise<string[]> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return provision(trx, cache, ctx, userId, await organizationIdsByJitEmailDomain(trx, domain));
}

/** A one-time token's organizations (an invitation by magic link), those that still exist. */
export async function provisionByOneTimeToken(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  userId: string,
  organizationIds: string[],
): Promise<string[]> {
  return provision(trx, cache, ctx, userId, await existingOrganizationIds(trx, organizationIds));
}

/** A sign-in through an enterprise SSO connector that organizations admit just in time. */
export async function provisionBySsoConnector(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  userId: string,
  ssoConnectorId: string,
): Promise<string[]> {
  return provision(trx, cache, ctx, userId, await organizationIdsByJitSsoConnector(trx, ssoConnectorId));
}
