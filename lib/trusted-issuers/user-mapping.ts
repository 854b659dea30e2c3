import type { Context } from 'koa';

import { findConnector } from '../connectors/queries.ts';
import { outboxEffects } from '../hooks/effects.ts';
import { requestOf } from '../hooks/payloads.ts';
import { RequestError } from '../http/errors.ts';
import { findSsoConnector } from '../sso/queries.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';
import { findUserByIdentifier, findUserRowBySocialIdentity } from '../users/queries.ts';
import { findUserRowBySsoIdentity } from '../users/sso-identity-queries.ts';
import { createUser } from '../users/users.ts';
import { findJitUserId, insertJitSubject } from './queries.ts';
import type { TrustedIssuer } from './schemas.ts';

/** An outside token that does not pass its issuer's policy; the message names the check. */
export class OutsideTokenRefused extends Error {
  override name = 'OutsideTokenRefused';
}

type Claims = Record<string, unknown>;

async function byIdentity(db: Queryable, cache: SharedCache, connectorId: string, value: string) {
  const social = await findConnector(db, cache, connectorId);
  if (social) {
    return findUserRowBySocialIdentity(db, social.target, value);
  }
  // An SSO identity is namespaced by its IdP's issuer, which the connector's configuration holds.
  const issuer = (await findSsoConnector(db, cache, connectorId))?.config.issuer;
  return typeof issuer === 'string' ? findUserRowBySsoIdentity(db, issuer, value) : undefined;
}

/** Longer emails fit no primary email (users' `primaryEmail` is at most 128 characters). */
const maxEmailLength = 128;

/**
 * The email an outside token vouches for, or why there is none. Only an email its issuer says it
 * verified counts: `email_verified` exactly `true` (OpenID Connect Core §5.1: a boolean; the string
 * "true" is not one), or any value of the claim the policy names as holding verified emails only.
 * An issuer that lets users type their email would otherwise hand over the account that has it.
 */
function verifiedEmail(policy: TrustedIssuer, claims: Claims): { email: string } | { refused: string } {
  const claim = policy.userMapping.verifiedEmailClaim ?? 'email';
  const value = claims[claim];
  if (typeof value !== 'string' || value.length === 0 || value.length > maxEmailLength) {
    return { refused: `has no usable '${claim}' claim to find the user by` };
  }
  if (policy.userMapping.verifiedEmailClaim === undefined && claims.email_verified !== true) {
    const said =
      claims.email_verified === undefined
        ? 'absent'
        : typeof claims.email_verified === 'string'
          ? `the string ${JSON.stringify(claims.email_verified.slice(0, 16))}, not true`
          : JSON.stringify(claims.email_verified).slice(0, 16);
    return {
      refused: `has an email its issuer does not say is verified (email_verified is ${said}); only a verified email maps to an account`,
    };
  }
  return { email: value };
}

/**
 * Another request committed first: the same subject's user (a duplicate key), or another user with the
 * email (a duplicate key, or seen by createUser's own check).
 */
const lostRace = (error: unknown) =>
  isUniqueViolation(error) || (error instanceof RequestError && error.code === 'user.email_already_in_use');

/**
 * A user for an outside subject seen for the first time, remembered by (policy, subject); the email
 * claim becomes the primary email when the issuer says it is verified and no one holds it. The user,
 * the link and `User.Created` commit together, once per subject.
 */
async function madeJustInTime(
  db: Queryable,
  cache: SharedCache,
  ctx: Context,
  policy: TrustedIssuer,
  subject: string,
  claims: Claims,
): Promise<string> {
  const make = (email: string | undefined) =>
    withTransaction(db, async (trx) => {
      const known = await findJitUserId(trx, policy.id, subject);
      if (known) {
        return known;
      }
      const emailFree = email !== undefined && !(await findUserByIdentifier(trx, 'email', email));
      const name = typeof claims.name === 'string' ? claims.name.slice(0, 128) : null;
      const user = await createUser(trx, { primaryEmail: emailFree ? email : undefined, name });
      await insertJitSubject(trx, policy.id, subject, user.id);
      // The token endpoint is mounted under /oidc, and the answer is not set yet: the event says what it
      // will be for a request that gets this far (the token is accepted), on the path the client called.
      const path = ctx.originalUrl.split('?')[0];
      const request = { ...requestOf(ctx), path, matchedRoute: path, status: 200 };
      await outboxEffects(trx, cache, request).emit('User.Created', { data: user });
      return user.id;
    });
  const attempt = async (email: string | undefined): Promise<string> => {
    try {
      return await make(email);
    } catch (error) {
      if (!lostRace(error)) {
        throw error;
      }
      // Two first tokens of one subject at once: the other made the user (this one's rolled back,
      // event and all).
      const other = await findJitUserId(db, policy.id, subject);
      if (other !== undefined) {
        return other;
      }
      // Another subject took the email between the check and the insert (each read sees what others
      // committed meanwhile): once more, without the email, which cannot collide again.
      if (email === undefined) {
        throw error;
      }
      return attempt(undefined);
    }
  };
  const vouched = verifiedEmail(policy, claims);
  return attempt('email' in vouched ? vouched.email : undefined);
}

/**
 * The user a token speaks for: one we have, or one an outside issuer's policy makes just in time,
 * which `make()` makes once every other check of the request has passed: a refused request
 * (its resource, its actor) leaves no user behind.
 */
export type LocalUser = { id: string } | { make: () => Promise<string> };

/** Our user for a verified outside token, as its policy's `userMapping` says. */
export async function localUserOf(
  db: Queryable,
  cache: SharedCache,
  ctx: Context,
  policy: TrustedIssuer,
  claims: Claims,
): Promise<LocalUser> {
  const { claim, by, connectorId } = policy.userMapping;
  if (by === 'email') {
    // Compared as our own email lookups compare (case-insensitively: one address, one account).
    const vouched = verifiedEmail(policy, claims);
    if ('refused' in vouched) {
      throw new OutsideTokenRefused(vouched.refused);
    }
    const user = await findUserByIdentifier(db, 'email', vouched.email);
    if (!user) {
      throw new OutsideTokenRefused(
        `names a user (by '${policy.userMapping.verifiedEmailClaim ?? claim}') that has no account here (no user has that email)`,
      );
    }
    return { id: user.id };
  }
  const value = claims[claim];
  if (typeof value !== 'string' || value.length === 0 || value.length > 255) {
    throw new OutsideTokenRefused(`has no usable '${claim}' claim to find the user by`);
  }
  if (by === 'jit') {
    const known = await findJitUserId(db, policy.id, value);
    return known ? { id: known } : { make: () => madeJustInTime(db, cache, ctx, policy, value, claims) };
  }
  const user = await byIdentity(db, cache, connectorId ?? '', value);
  if (!user) {
    throw new OutsideTokenRefused(
      `names a user (by '${claim}') that has no account here (no user holds that identity at connector ${connectorId})`,
    );
  }
  return { id: user.id };
}
