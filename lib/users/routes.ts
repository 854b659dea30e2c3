import { z } from 'zod';

import { pageOf, setTotal } from '../http/api/pagination.ts';
import { type Api, queryBoolean } from '../http/api/route.ts';
import { searchListQuery } from '../http/api/search.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { customDataInput } from '../http/limits.ts';
import { revokeAccount } from '../sessions/revoke.ts';
import { userParams } from '../shared/entity-id.ts';
import { pwnedPasswordLookup } from '../sign-in-experience/pwned-passwords.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { parseLegacyDigest, type PasswordAlgorithm } from './password-digests.ts';
import { deleteUser, listUsers, toUser, userSearchColumns } from './queries.ts';
import { createUserBody, detailedUserSchema, updateUserBody, userProfileSchema, userSchema } from './schemas.ts';
import { listSsoIdentities } from './sso-identity-queries.ts';
import { changeUser, createUser, getUserRow, getUserRowForUpdate, setPassword, verifyUserPassword } from './users.ts';

const tag = 'Users';
const jsonObject = z.record(z.string(), z.unknown());

/** An imported digest's algorithm, required; a Legacy digest is read now so that it cannot fail at sign-in. */
function importedAlgorithm(digest: string, algorithm: PasswordAlgorithm | undefined): PasswordAlgorithm {
  if (!algorithm) {
    throw new RequestError('user.password_algorithm_required');
  }
  if (algorithm === 'Legacy') {
    parseLegacyDigest(digest);
  }
  return algorithm;
}

export function userRoutes(api: Api, { db, cache, config, logger }: ServiceContext): void {
  // The management API holds a user's password to the policy too (docs/decisions.md, "Users").
  const isPwned = pwnedPasswordLookup(config.pwnedPasswordsUrl, logger);
  api.add(
    {
      method: 'get',
      path: '/users',
      summary:
        "List users, with Logto's search parameters (`search`, `search.<field>`, `mode`, `joint`, `isCaseSensitive`)",
      tag,
      query: searchListQuery(userSearchColumns, {
        excludeRoleId: z.string().max(21).optional(),
        excludeOrganizationId: z.string().max(21).optional(),
      }),
      response: z.array(userSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listUsers(db, query, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/users',
      summary:
        'Create a user (default roles are given), with a password or with a digest from another system (`passwordDigest`, `passwordAlgorithm`)',
      tag,
      body: createUserBody,
      response: userSchema,
      errors: [422],
    },
    async ({ body }, _ctx, trx) => {
      const { passwordPolicy } = await currentSignInExperience(trx, cache);
      const { password, passwordDigest, passwordAlgorithm, ...user } = body;
      if (password !== undefined && passwordDigest !== undefined) {
        throw new RequestError('user.password_and_digest');
      }
      if (passwordDigest !== undefined) {
        return createUser(trx, user, {
          digest: passwordDigest,
          algorithm: importedAlgorithm(passwordDigest, passwordAlgorithm),
        });
      }
      return createUser(
        trx,
        user,
        password === undefined ? undefined : { plain: password, rules: { policy: passwordPolicy, isPwned } },
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/users/:userId',
      summary:
        'Get a user, with its password digest (`includePasswordHash`) and SSO identities (`includeSsoIdentities`)',
      tag,
      params: userParams,
      query: z.object({
        includePasswordHash: queryBoolean.optional(),
        includeSsoIdentities: queryBoolean.optional(),
      }),
      response: detailedUserSchema,
      errors: [404],
    },
    async ({ params, query }) => {
      const row = await getUserRow(db, params.userId);
      return {
        ...toUser(row),
        ...(query.includePasswordHash && {
          passwordDigest: row.password_digest,
          passwordAlgorithm: row.password_algorithm as PasswordAlgorithm | null,
        }),
        ...(query.includeSsoIdentities && { ssoIdentities: await listSsoIdentities(db, row.id) }),
      };
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/users/:userId',
      summary: 'Update a user (customData is replaced)',
      tag,
      params: userParams,
      body: updateUserBody,
      response: userSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      if (Object.keys(body).length === 0) {
        throw new RequestError('entity.invalid_input');
      }
      return changeUser(trx, params.userId, body);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId',
      summary: 'Delete a user and end their sessions',
      tag,
      params: userParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx, effects) => {
      await effects.emit('User.Deleted', { data: toUser(await getUserRow(trx, params.userId)) });
      await revokeAccount(trx, params.userId);
      await deleteUser(trx, params.userId);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/users/:userId/custom-data',
      summary: "Get a user's custom data",
      tag,
      params: userParams,
      response: jsonObject,
      errors: [404],
    },
    async ({ params }) => toUser(await getUserRow(db, params.userId)).customData,
  );

  api.add(
    {
      method: 'patch',
      path: '/users/:userId/custom-data',
      summary: "Merge keys into a user's custom data",
      tag,
      params: userParams,
      body: z.strictObject({ customData: customDataInput }),
      response: jsonObject,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      const current = toUser(await getUserRowForUpdate(trx, params.userId));
      return (await changeUser(trx, params.userId, { customData: { ...current.customData, ...body.customData } }))
        .customData;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/users/:userId/profile',
      summary: "Merge fields into a user's profile",
      tag,
      params: userParams,
      body: z.strictObject({ profile: userProfileSchema }),
      response: userProfileSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      const current = toUser(await getUserRowForUpdate(trx, params.userId));
      return (await changeUser(trx, params.userId, { profile: { ...current.profile, ...body.profile } })).profile;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/users/:userId/password',
      summary: "Set a user's password (checked against the password policy)",
      tag,
      params: userParams,
      body: z.strictObject({ password: z.string().min(1).max(256) }),
      response: userSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const { passwordPolicy } = await currentSignInExperience(trx, cache);
      return setPassword(trx, params.userId, body.password, { policy: passwordPolicy, isPwned });
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/users/:userId/password/expiration',
      summary: "Expire a user's password now: it signs in no more until a password reset (password expiration on)",
      tag,
      params: userParams,
      response: userSchema,
      errors: [400, 404],
    },
    async ({ params }, _ctx, trx) => {
      if (!(await currentSignInExperience(trx, cache)).passwordExpiration.enabled) {
        throw new RequestError('sign_in_experiences.password_expiration_not_enabled');
      }
      await getUserRowForUpdate(trx, params.userId);
      return changeUser(trx, params.userId, { passwordUpdatedAt: 0 });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/users/:userId/password/verify',
      summary: "Check a user's password: 204 when it matches",
      tag,
      params: userParams,
      body: z.strictObject({ password: z.string().min(1).max(256) }),
      errors: [404, 422],
      // A check that changes nothing: no transaction is held while the hash is computed.
      transaction: false,
    },
    async ({ params, body }, _ctx, db) => {
      const row = await getUserRow(db, params.userId);
      if (!(await verifyUserPassword(db, row, body.password))) {
        throw new RequestError('session.invalid_credentials', { reason: 'Wrong password.' });
      }
    },
  );

  api.add(
    {
      method: 'get',
      path: '/users/:userId/has-password',
      summary: 'Whether a user has a password',
      tag,
      params: userParams,
      response: z.object({ hasPassword: z.boolean() }),
      errors: [404],
    },
    async ({ params }) => ({ hasPassword: toUser(await getUserRow(db, params.userId)).hasPassword }),
  );

  api.add(
    {
      method: 'patch',
      path: '/users/:userId/is-suspended',
      summary: 'Suspend (ending every session and refresh token) or reactivate a user',
      tag,
      params: userParams,
      body: z.strictObject({ isSuspended: z.boolean() }),
      response: userSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => changeUser(trx, params.userId, { isSuspended: body.isSuspended }),
  );
}
