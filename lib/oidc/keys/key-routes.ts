import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import type { ServiceContext } from '../../http/context.ts';
import { RequestError } from '../../http/errors.ts';
import type { Queryable } from '../../storage/database.ts';
import { deleteKey, listKeys, rotateKey } from './keys.ts';

const tag = 'Configs';
const keyType = z.object({ keyType: z.enum(['private-keys', 'cookie-keys']) });
const keySchema = z.object({
  id: z.string(),
  createdAt: z.number(),
  signingKeyAlgorithm: z.enum(['RSA', 'EC']).optional(),
  status: z.enum(['Current', 'Previous']),
});

/** Signing and cookie keys, in Logto's shapes. The newest key of each algorithm is `Current`. */
export function keyRoutes(api: Api, { db }: ServiceContext): void {
  const summaries = async (kind: 'private-keys' | 'cookie-keys', db: Queryable) => {
    const keys = await listKeys(db, kind);
    return keys.map(({ retired, ...key }) => ({
      ...key,
      status: retired ? ('Previous' as const) : ('Current' as const),
    }));
  };

  api.add(
    {
      method: 'get',
      path: '/configs/oidc/:keyType',
      summary: 'List signing or cookie keys',
      tag,
      params: keyType,
      response: z.array(keySchema),
    },
    async ({ params }) => summaries(params.keyType, db),
  );

  api.add(
    {
      method: 'post',
      path: '/configs/oidc/:keyType/rotate',
      summary: 'Rotate keys: a new key signs from now on; the previous one stays published until its tokens expire',
      tag,
      params: keyType,
      body: z.strictObject({
        signingKeyAlgorithm: z.enum(['RSA', 'EC']).optional(),
        rotationGracePeriod: z.number().optional(),
      }),
      response: z.array(keySchema),
      errors: [422],
    },
    async ({ params, body }, _ctx, trx) => {
      await rotateKey(trx, params.keyType, body.signingKeyAlgorithm ?? 'EC');
      return summaries(params.keyType, trx);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/configs/oidc/:keyType/:keyId',
      summary: 'Delete a previous key (the current key cannot be deleted)',
      tag,
      params: keyType.extend({ keyId: z.string().min(1).max(64) }),
      errors: [404, 422],
    },
    async ({ params }, _ctx, trx) => {
      const result = await deleteKey(trx, params.keyType, params.keyId);
      if (result === 'not-found') {
        throw new RequestError('entity.not_exists_with_id', { entity: 'key', id: params.keyId });
      }
      if (result === 'in-use') {
        throw new RequestError('oidc.only_previous_key_can_be_deleted');
      }
    },
  );
}
