import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import type { ServiceContext } from '../../http/context.ts';
import { orNotFound } from '../../http/errors.ts';
import { idParams } from '../../shared/entity-id.ts';
import type { Queryable } from '../../storage/database.ts';
import { findHookForUpdate, findSigningHook, updateHook } from '../queries.ts';
import { type Hook, hookSchema } from '../schemas.ts';
import { publicJwkOf, publicKeyOf, rotatedKeys, signatureSchemes, signingKeysAt } from './signing-keys.ts';

const tag = 'Hooks';

/** The hook with its keys, or 404. */
export const getSigningHook = async (db: Queryable, id: string) =>
  orNotFound(await findSigningHook(db, id), 'hook', id);

/**
 * A hook's signing key: what a receiver verifies with (GET), and its rotation (PATCH, Logto's
 * route, which answers with the hook). The HMAC secret is shown where Logto shows it, in the hook.
 */
export function signingKeyRoutes(api: Api, { config }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/hooks/:id/signing-key',
      summary: "The hook's signature scheme and, for ed25519, its public key (whpk_ and the raw key in base64)",
      tag,
      params: idParams,
      response: z.object({ scheme: z.enum(signatureSchemes), publicKey: z.string().optional() }),
      errors: [404],
    },
    async ({ params }, _ctx, db) => {
      const { keys } = await getSigningHook(db, params.id);
      return keys.current.scheme === 'ed25519'
        ? { scheme: keys.current.scheme, publicKey: publicKeyOf(keys.current) }
        : { scheme: keys.current.scheme };
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/hooks/:id/signing-key',
      summary:
        'Replace the signing key of a hook (and its ed25519 key pair); the old key goes on signing beside the new one for HOOKS_SIGNATURE_OVERLAP seconds',
      tag,
      params: idParams,
      response: hookSchema,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      orNotFound(await findHookForUpdate(trx, params.id), 'hook', params.id);
      const hook = await getSigningHook(trx, params.id);
      const { signingKey, keys } = rotatedKeys(hook, hook.signatureScheme, {
        rotate: true,
        now: Date.now(),
        overlapMs: config.hooksSignatureOverlapSeconds * 1000,
      });
      // The answer is the hook as every hook route shows it: never its keys.
      const next: Hook = { ...hookSchema.parse(hook), signingKey };
      await updateHook(trx, next, keys);
      return next;
    },
  );
}

/**
 * The public keys a receiver verifies `v1a` signatures with, without a management token (public
 * keys are no secret; the hook's id is the receiver's to know): the current key and, during a
 * rotation's overlap, the previous one. An HMAC hook has none.
 */
export function publicKeyRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/hooks/:id/jwks',
      summary: "The hook's Ed25519 public keys as a JWK set, for receivers verifying v1a signatures",
      tag,
      params: idParams,
      response: z.object({ keys: z.array(z.record(z.string(), z.string())) }),
      errors: [404],
    },
    async ({ params }, ctx) => {
      const { keys } = await getSigningHook(db, params.id);
      ctx.set('cache-control', 'public, max-age=300');
      return {
        keys: signingKeysAt(keys, Date.now()).flatMap((key) => (key.scheme === 'ed25519' ? [publicJwkOf(key)] : [])),
      };
    },
  );
}
