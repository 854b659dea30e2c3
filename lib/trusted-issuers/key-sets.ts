import { createLocalJWKSet, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';

import { GuardedGetError, guardedGetJson } from '../http/outbound/guarded-get.ts';

/** An outside issuer's key set could not be had: the grant says so as its refusal. */
export class KeySetUnavailable extends Error {
  override name = 'KeySetUnavailable';
}

const jwksSchema = z.object({ keys: z.array(z.looseObject({ kty: z.string() })).max(100) });

/**
 * A fetched set and its verifier, made once per fetch: the verifier keeps the keys it imported, which
 * a verifier made per token would import again for every token (the costliest step of a check).
 */
export type KeySet = { verifier: JWTVerifyGetKey; fetchedAt: number };

/** An unknown `kid` refetches the set at most this often: a stream of forged kids cannot make us a proxy. */
const refetchIntervalMs = 60_000;
/** Kept at most this long, so a key the issuer withdrew stops verifying within it. */
const maxAgeMs = 10 * 60_000;
/**
 * A failed fetch (a 404, a timeout, not a key set) is the answer for this long: a stream of tokens
 * naming an issuer whose keys are gone costs one fetch per interval, not one per request.
 */
const failureMemoryMs = 30_000;
/** 5 s, 256 KB: a key set is small, and the token's caller waits on the fetch. */
const fetchLimits = { subject: "the issuer's jwksUri", timeoutMs: 5000, sizeLimit: 256 * 1024 };

/**
 * Outside issuers' key sets (JWKS), fetched through the SSRF guard and kept in memory by URI as
 * verifiers for `jwtVerify`. Each instance keeps its own: a key set is public and refetchable,
 * nothing that must be shared.
 */
export class OutsideKeySets {
  readonly #entries = new Map<string, KeySet>();
  readonly #fetching = new Map<string, Promise<KeySet>>();
  /** The last failed fetch of each URI (URIs are the policies': few), until it may be tried again. */
  readonly #failures = new Map<string, { error: KeySetUnavailable; until: number }>();

  private readonly allowPrivateTargets: boolean;

  constructor(allowPrivateTargets: boolean) {
    this.allowPrivateTargets = allowPrivateTargets;
  }

  /** The set, fetched when not held or older than its maximum age. */
  async current(uri: string): Promise<KeySet> {
    const held = this.#entries.get(uri);
    return held && Date.now() - held.fetchedAt < maxAgeMs ? held : this.#fetch(uri);
  }

  /** A fresh set's verifier after an unknown `kid`, unless the held one is younger than the refetch interval. */
  async refetched(uri: string): Promise<JWTVerifyGetKey | undefined> {
    const held = this.#entries.get(uri);
    if (held && Date.now() - held.fetchedAt < refetchIntervalMs) {
      return undefined;
    }
    return (await this.#fetch(uri)).verifier;
  }

  #fetch(uri: string): Promise<KeySet> {
    const failed = this.#failures.get(uri);
    if (failed && Date.now() < failed.until) {
      return Promise.reject(failed.error);
    }
    let pending = this.#fetching.get(uri);
    if (!pending) {
      pending = this.#load(uri)
        .then(
          (entry) => {
            this.#failures.delete(uri);
            return entry;
          },
          (error: unknown) => {
            if (error instanceof KeySetUnavailable) {
              this.#failures.set(uri, { error, until: Date.now() + failureMemoryMs });
            }
            throw error;
          },
        )
        .finally(() => this.#fetching.delete(uri));
      this.#fetching.set(uri, pending);
    }
    return pending;
  }

  async #load(uri: string): Promise<KeySet> {
    let document: unknown;
    try {
      document = (await guardedGetJson(uri, { ...fetchLimits, allowPrivateTargets: this.allowPrivateTargets })).body;
    } catch (error) {
      if (error instanceof GuardedGetError) {
        throw new KeySetUnavailable(`the issuer's jwksUri could not be fetched (${error.message})`);
      }
      throw error;
    }
    const parsed = jwksSchema.safeParse(document);
    if (!parsed.success) {
      throw new KeySetUnavailable("the issuer's jwksUri does not hold a JWK set");
    }
    const entry = { verifier: createLocalJWKSet(parsed.data), fetchedAt: Date.now() };
    this.#entries.set(uri, entry);
    return entry;
  }
}
