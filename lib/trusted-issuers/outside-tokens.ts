import { decodeJwt, errors as joseErrors, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Context } from 'koa';

import type { Config } from '../config/env.ts';
import { BoundedCache } from '../storage/bounded-cache.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { type KeySet, KeySetUnavailable, OutsideKeySets } from './key-sets.ts';
import { listTrustedIssuers } from './queries.ts';
import type { TrustedIssuer } from './schemas.ts';
import { type LocalUser, localUserOf, OutsideTokenRefused } from './user-mapping.ts';

export { OutsideTokenRefused, type LocalUser } from './user-mapping.ts';

/** Who an accepted outside token speaks for, under which policy, and its verified claims. */
export type OutsideSubject = { user: LocalUser; trustedIssuerId: string; claims: JWTPayload };

/**
 * Verified outside tokens kept per instance: 10,000 or 32 MB, whichever comes first (4,000 valid
 * 40 KB assertions took a worker from 40 to 520 MB when only the count was bounded).
 */
const verifiedTokenLimits = { maxEntries: 10_000, maxBytes: 32 * 1024 * 1024 };

/** The contract's clock tolerance. */
const clockTolerance = 5;

/** The token's own `iss`, unverified: it only chooses the policy (and keys) to verify it with. */
function claimedIssuer(token: string): string | undefined {
  try {
    const { iss } = decodeJwt(token);
    return iss;
  } catch {
    return undefined;
  }
}

function refusalOf(error: unknown, policy: TrustedIssuer): Error {
  if (error instanceof KeySetUnavailable) {
    return new OutsideTokenRefused(`cannot be verified: ${error.message}`);
  }
  if (error instanceof joseErrors.JWTExpired) {
    return new OutsideTokenRefused('is expired');
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    return new OutsideTokenRefused(
      error.claim === 'aud'
        ? `audience is not ${policy.audience}, the audience this issuer's policy requires`
        : `claim '${error.claim}' is not acceptable (${error.reason})`,
    );
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) {
    return new OutsideTokenRefused(
      `is signed with an algorithm the policy does not allow (${policy.algorithms.join(', ')})`,
    );
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new OutsideTokenRefused("is signed with a key that is not in the issuer's key set");
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new OutsideTokenRefused("signature does not verify with the issuer's keys");
  }
  if (error instanceof joseErrors.JOSEError) {
    return new OutsideTokenRefused(`is not a valid JWT (${error.code})`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * JWTs of trusted outside issuers (RFC 8693 subject tokens, RFC 7523 assertions): each accepted only
 * under its issuer's policy — for the listed applications, with the policy's audience, algorithms
 * and keys, unexpired — and mapped to one of our users.
 */
export function outsideTokens({ config, db, cache }: { config: Config; db: Queryable; cache: SharedCache }) {
  const keySets = new OutsideKeySets(config.hooksAllowPrivateTargets);
  const verifiedTokens = new BoundedCache<Promise<JWTPayload>>(verifiedTokenLimits);

  async function verified(policy: TrustedIssuer, token: string, keys: KeySet): Promise<JWTPayload> {
    const verify = (verifier: JWTVerifyGetKey) =>
      jwtVerify(token, verifier, {
        issuer: policy.issuer,
        audience: policy.audience,
        algorithms: policy.algorithms,
        clockTolerance,
        requiredClaims: ['exp'],
      });
    try {
      try {
        return (await verify(keys.verifier)).payload;
      } catch (error) {
        // A key the issuer has rotated in since we fetched its set.
        const refetched =
          error instanceof joseErrors.JWKSNoMatchingKey ? await keySets.refetched(policy.jwksUri) : undefined;
        if (!refetched) {
          throw error;
        }
        return (await verify(refetched)).payload;
      }
    } catch (error) {
      throw refusalOf(error, policy);
    }
  }

  /**
   * The token's claims, its signature checked once for these bytes under this policy and this fetch
   * of the issuer's keys (API A exchanges one token for each of its calls, and the check is the
   * costliest step): a changed policy or a refetched key set checks it again. Its time claims are
   * checked every time.
   */
  async function verifiedOnce(policy: TrustedIssuer, token: string): Promise<JWTPayload> {
    const keys = await keySets.current(policy.jwksUri).catch((error: unknown) => {
      throw refusalOf(error, policy);
    });
    // What the signature check depends on names the entry: a changed policy or key set checks again.
    const key = [policy.id, policy.issuer, policy.audience, policy.algorithms.join(), keys.fetchedAt, token].join('\n');
    let pending = verifiedTokens.get(key);
    if (!pending) {
      pending = verified(policy, token, keys);
      // The key and the claims (no larger than the token that carries them).
      verifiedTokens.set(key, pending, key.length + token.length);
      pending.catch(() => verifiedTokens.delete(key));
    }
    const claims = await pending;
    const now = Date.now() / 1000;
    if (typeof claims.exp === 'number' && claims.exp + clockTolerance <= now) {
      throw new OutsideTokenRefused('is expired');
    }
    if (typeof claims.nbf === 'number' && claims.nbf - clockTolerance > now) {
      throw new OutsideTokenRefused("claim 'nbf' is not acceptable (check_failed)");
    }
    return claims;
  }

  return {
    /** The policy of the issuer the token claims, if one is trusted (nothing is verified yet). */
    async policyOf(token: string): Promise<TrustedIssuer | undefined> {
      const issuer = claimedIssuer(token);
      if (issuer === undefined || issuer === config.issuer) {
        return undefined;
      }
      return (await listTrustedIssuers(db, cache)).find((policy) => policy.issuer === issuer);
    },

    /** Checks the token under its policy for `clientId`; throws OutsideTokenRefused naming the check. */
    async accept(ctx: Context, policy: TrustedIssuer, token: string, clientId: string): Promise<OutsideSubject> {
      if (!policy.applicationIds.includes(clientId)) {
        throw new OutsideTokenRefused(
          `is from ${policy.issuer}, whose trust policy does not list application ${clientId}`,
        );
      }
      const claims = await verifiedOnce(policy, token);
      return { user: await localUserOf(db, cache, ctx, policy, claims), trustedIssuerId: policy.id, claims };
    },
  };
}

export type OutsideTokens = ReturnType<typeof outsideTokens>;
