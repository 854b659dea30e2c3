import type { Knex } from 'knex';
import { z } from 'zod';

import { RequestError } from '../../http/errors.ts';
import { pageOf, paginationQuery, setTotal } from '../../http/pagination.ts';
import type { Api } from '../../http/route.ts';
import { listInvitations } from './invitation-queries.ts';
import { acceptInvitation, createInvitation, removeInvitation, revokeInvitation } from './invitations.ts';
import { getInvitation } from '../lookups.ts';
import { createInvitationBody, invitationSchema, invitationStatusBody } from '../schemas.ts';

const tag = 'Organization invitations';
const idParams = z.object({ id: z.string().min(1).max(21) });

/** Invitations to join an organization; accepting one makes the invitee a member with its roles. */
export function invitationRoutes(api: Api, db: Knex): void {
  api.add(
    {
      method: 'get',
      path: '/organization-invitations',
      summary: 'List organization invitations, newest first',
      tag,
      query: paginationQuery.extend({
        organizationId: z.string().max(21).optional(),
        inviterId: z.string().max(21).optional(),
        invitee: z.string().max(256).optional(),
      }),
      response: z.array(invitationSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listInvitations(db, query, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organization-invitations',
      summary: 'Invite an e-mail address to an organization (the invitation e-mail is not sent by this service)',
      tag,
      body: createInvitationBody,
      response: invitationSchema,
      status: 201,
      errors: [404, 422, 501],
    },
    async ({ body }, _ctx, trx) => {
      const { messagePayload, ...input } = body;
      if (messagePayload !== undefined && messagePayload !== false) {
        throw new RequestError('request.feature_not_supported', {
          reason:
            'Sending invitation e-mails is not supported yet; create the invitation with `messagePayload: false` and deliver it yourself.',
        });
      }
      return createInvitation(trx, input);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/organization-invitations/:id',
      summary: 'Get an organization invitation',
      tag,
      params: idParams,
      response: invitationSchema,
      errors: [404],
    },
    async ({ params }) => getInvitation(db, params.id),
  );

  api.add(
    {
      method: 'delete',
      path: '/organization-invitations/:id',
      summary: 'Delete an organization invitation',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => removeInvitation(trx, params.id),
  );

  api.add(
    {
      method: 'put',
      path: '/organization-invitations/:id/status',
      summary: 'Accept (the user joins with the invitation’s roles) or revoke a pending invitation',
      tag,
      params: idParams,
      body: invitationStatusBody,
      response: invitationSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx, effects) => {
      if (body.status === 'Revoked') {
        return revokeInvitation(trx, params.id);
      }
      const { acceptedUserId } = body;
      if (!acceptedUserId) {
        throw new RequestError('request.invalid_input', {
          details: 'The `acceptedUserId` is required when accepting an invitation.',
        });
      }
      const { invitation, membership } = await acceptInvitation(trx, params.id, acceptedUserId);
      await effects.emit('Organization.Membership.Updated', { membership });
      return invitation;
    },
  );
}
