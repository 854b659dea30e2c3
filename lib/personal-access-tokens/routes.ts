import type { Knex } from 'knex';
import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { userParams } from '../shared/entity-id.ts';
import { generateId, generateSecret } from '../storage/ids.ts';
import { getUserRow, getUserRowForUpdate } from '../users/users.ts';
import {
  deletePersonalAccessToken,
  findPersonalAccessToken,
  insertPersonalAccessToken,
  listPersonalAccessTokens,
  renamePersonalAccessToken,
} from './queries.ts';
import {
  createPersonalAccessTokenBody,
  type PersonalAccessToken,
  personalAccessTokenSchema,
  tokenName,
} from './schemas.ts';

const tag = 'Users';
const path = '/users/:userId/personal-access-tokens';
const nameParams = userParams.extend({ name: tokenName });
const nameBody = z.strictObject({ name: tokenName });

const tokenNotFound = (name: string) =>
  new RequestError('entity.not_found', { reason: `The personal access token \`${name}\` does not exist.` });

/**
 * A name is given (created, renamed to) with the user's row locked: two requests for one name then
 * run one after the other, and the second is told the name is taken rather than meeting the unique
 * index.
 */
async function rename(
  trx: Knex.Transaction,
  userId: string,
  name: string,
  newName: string,
): Promise<PersonalAccessToken> {
  await getUserRowForUpdate(trx, userId);
  const current = await findPersonalAccessToken(trx, userId, name);
  if (!current) {
    throw tokenNotFound(name);
  }
  if (newName !== name) {
    if (await findPersonalAccessToken(trx, userId, newName)) {
      throw new RequestError('user.personal_access_token_name_exists');
    }
    await renamePersonalAccessToken(trx, userId, name, newName);
  }
  return { ...current, name: newName };
}

async function remove(trx: Knex.Transaction, userId: string, name: string): Promise<void> {
  await getUserRow(trx, userId);
  if (!(await deletePersonalAccessToken(trx, userId, name))) {
    throw tokenNotFound(name);
  }
}

/**
 * A user's personal access tokens (Logto's): long-lived secrets a script holds in the user's name,
 * exchanged at the token endpoint (`urn:logto:token-type:personal_access_token`) for the user's
 * access tokens. Named within the user; Logto's routes by name in the path, and its newer ones with
 * the name in the body (a name holding `/` or `%` travels badly in a path).
 */
export function personalAccessTokenRoutes(api: Api): void {
  api.add(
    {
      method: 'get',
      path,
      summary: "A user's personal access tokens, values included",
      tag,
      params: userParams,
      response: z.array(personalAccessTokenSchema),
      errors: [404],
    },
    async ({ params }, _ctx, db) => {
      await getUserRow(db, params.userId);
      return listPersonalAccessTokens(db, params.userId);
    },
  );

  api.add(
    {
      method: 'post',
      path,
      summary: 'Add a personal access token (expiresAt: milliseconds since the epoch; none: it never expires)',
      tag,
      params: userParams,
      body: createPersonalAccessTokenBody,
      response: personalAccessTokenSchema,
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const expiresAt = body.expiresAt ?? null;
      if (expiresAt !== null && expiresAt <= Date.now()) {
        throw new RequestError(
          'request.invalid_input',
          { details: 'The value of `expiresAt` must be in the future.' },
          { status: 400 },
        );
      }
      await getUserRowForUpdate(trx, params.userId);
      if (await findPersonalAccessToken(trx, params.userId, body.name)) {
        throw new RequestError('user.personal_access_token_name_exists');
      }
      return insertPersonalAccessToken(trx, {
        id: generateId(),
        userId: params.userId,
        name: body.name,
        value: `pat_${generateSecret()}`,
        expiresAt,
      });
    },
  );

  api.add(
    {
      method: 'patch',
      path,
      summary: 'Rename a personal access token, named by `currentName`',
      tag,
      params: userParams,
      body: z.strictObject({ currentName: tokenName, name: tokenName }),
      response: personalAccessTokenSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => rename(trx, params.userId, body.currentName, body.name),
  );

  api.add(
    {
      method: 'patch',
      path: `${path}/:name`,
      summary: 'Rename a personal access token, named in the path',
      tag,
      params: nameParams,
      body: nameBody,
      response: personalAccessTokenSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => rename(trx, params.userId, params.name, body.name),
  );

  api.add(
    {
      method: 'post',
      path: `${path}/delete`,
      summary: 'Delete a personal access token, named in the body',
      tag,
      params: userParams,
      body: nameBody,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => remove(trx, params.userId, body.name),
  );

  api.add(
    {
      method: 'delete',
      path: `${path}/:name`,
      summary: 'Delete a personal access token, named in the path',
      tag,
      params: nameParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => remove(trx, params.userId, params.name),
  );
}
