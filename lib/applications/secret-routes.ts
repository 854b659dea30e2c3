import type { Knex } from 'knex';
import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { tenantId } from '../shared/tenant.ts';
import { generateId, generateSecret } from '../storage/ids.ts';
import { getApplication } from './applications.ts';
import { findApplicationForUpdate, replaceLegacySecret } from './queries.ts';
import { type Application, applicationSchema, applicationSecretSchema, confidentialTypes } from './schemas.ts';
import {
  countApplicationSecrets,
  deleteApplicationSecret,
  findApplicationSecret,
  insertApplicationSecret,
  listApplicationSecrets,
  renameApplicationSecret,
} from './secret-queries.ts';

const tag = 'Applications';
const idParams = z.object({ id: z.string().min(1).max(64) });
const secretName = z.string().min(1).max(256);
const nameParams = idParams.extend({ name: secretName });

/** Each token request compares the secret it presents with every one of its application's. */
const maxSecretsPerApplication = 20;

const createSecretBody = z.strictObject({
  name: secretName,
  /** Milliseconds since the epoch; absent or null: never expires. */
  expiresAt: z.number().int().positive().nullable().optional(),
});

const notFound = (id: string) => new RequestError('entity.not_exists_with_id', { entity: 'application', id });
const secretNotFound = (name: string) =>
  new RequestError('entity.not_found', { reason: `The application has no secret named ${name}.` });

/** Locked until the transaction ends: secrets of one application are added and renamed one at a time. */
async function lockedApplication(trx: Knex.Transaction, id: string): Promise<Application> {
  const application = await findApplicationForUpdate(trx, id);
  if (!application) {
    throw notFound(id);
  }
  return application;
}

/**
 * Logto's application secrets: several named secrets per confidential application, any unexpired
 * one authenticating it at the token endpoint beside the legacy `secret` (`oidc/clients/named-secrets.ts`),
 * so that a secret is rotated without downtime: add a new one, move the clients, delete the old
 * one. Every change bumps the `applications` cache: a deleted secret stops on every instance at
 * the next request; an expired one stops when it expires (checked at each use). No webhook event:
 * the specification's catalogue has none for applications.
 */
export function applicationSecretRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/applications/:id/secrets',
      summary: 'List the application secrets',
      tag,
      params: idParams,
      response: z.array(applicationSecretSchema),
      errors: [404],
    },
    async ({ params }) => {
      await getApplication(db, params.id);
      return listApplicationSecrets(db, params.id);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/applications/:id/secrets',
      summary: 'Add an application secret',
      tag,
      params: idParams,
      body: createSecretBody,
      response: applicationSecretSchema,
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const application = await lockedApplication(trx, params.id);
      if (!confidentialTypes.has(application.type)) {
        throw new RequestError('entity.db_constraint_violated', {
          reason: 'Only machine-to-machine and traditional web applications have secrets.',
        });
      }
      const createdAt = Date.now();
      if (typeof body.expiresAt === 'number' && body.expiresAt <= createdAt) {
        throw new RequestError(
          'request.invalid_input',
          { details: 'The value of `expiresAt` must be in the future.' },
          { status: 400 },
        );
      }
      if (await findApplicationSecret(trx, params.id, body.name)) {
        throw new RequestError('application.secret_name_exists', { name: body.name });
      }
      if ((await countApplicationSecrets(trx, params.id)) >= maxSecretsPerApplication) {
        throw new RequestError('request.invalid_input', {
          details: `An application holds at most ${maxSecretsPerApplication} secrets: delete one first.`,
        });
      }
      const secret = {
        tenantId,
        applicationId: params.id,
        name: body.name,
        value: generateSecret(),
        createdAt,
        expiresAt: body.expiresAt ?? null,
      };
      await insertApplicationSecret(trx, { ...secret, id: generateId() });
      return secret;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/applications/:id/secrets/:name',
      summary: 'Rename an application secret',
      tag,
      params: nameParams,
      body: z.strictObject({ name: secretName }),
      response: applicationSecretSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await lockedApplication(trx, params.id);
      const current = await findApplicationSecret(trx, params.id, params.name);
      if (!current) {
        throw secretNotFound(params.name);
      }
      if (body.name !== params.name) {
        if (await findApplicationSecret(trx, params.id, body.name)) {
          throw new RequestError('application.secret_name_exists', { name: body.name });
        }
        await renameApplicationSecret(trx, params.id, params.name, body.name);
      }
      return { ...current, name: body.name };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/applications/:id/secrets/:name',
      summary: 'Delete an application secret',
      tag,
      params: nameParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await lockedApplication(trx, params.id);
      if (!(await deleteApplicationSecret(trx, params.id, params.name))) {
        throw secretNotFound(params.name);
      }
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/applications/:id/legacy-secret',
      summary: 'Delete the application legacy secret',
      tag,
      params: idParams,
      response: applicationSchema,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      if (params.id === consoleApp.applicationId) {
        throw new RequestError('application.internal_application_violation');
      }
      const application = await lockedApplication(trx, params.id);
      if (application.secret === undefined) {
        throw new RequestError('application.no_legacy_secret_found');
      }
      await replaceLegacySecret(trx, params.id);
      // Read again: an application whose secret is internal shows none.
      return getApplication(trx, params.id);
    },
  );
}
