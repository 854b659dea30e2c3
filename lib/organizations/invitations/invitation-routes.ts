import { z } from 'zod';

import { pageOf, paginationQuery, setTotal } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import type { ServiceContext } from '../../http/context.ts';
import { RequestError } from '../../http/errors.ts';
import type { Connectors } from '../../messages/index.ts';
import { idParams } from '../../shared/entity-id.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { getInvitation } from '../lookups.ts';
import { createInvitationBody, invitationMessagePayload, invitationSchema, invitationStatusBody } from '../schemas.ts';
import { invitationConnector, sendInvitationMessage } from './invitation-message.ts';
import { deleteInvitation, listInvitations } from './invitation-queries.ts';
import { acceptInvitation, createInvitation, removeInvitation, revokeInvitation } from './invitations.ts';

const tag = 'Organization invitations';

/**
 * Invitations to join an organization; accepting one makes the invitee a member with its roles. The
 * invitation email goes through the email connector (`messages`).
 */
export function invitationRoutes(
  api: Api,
  { db, messages }: Pick<ServiceContext, 'db'> & { messages: Connectors },
): void {
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
      summary:
        'Invite an e-mail address to an organization; with a messagePayload, email the invitation (its link) to the invitee',
      tag,
      body: createInvitationBody,
      response: invitationSchema,
      status: 201,
      errors: [404, 422, 501, 502],
      // Sending waits on the mail server: no lock is held meanwhile.
      transaction: false,
    },
    async ({ body }, _ctx, pool) => {
      const { messagePayload, ...input } = body;
      if (messagePayload) {
        invitationConnector(messages);
      }
      const invitation = await withTransaction(pool, (trx) => createInvitation(trx, input));
      if (messagePayload) {
        // As in Logto, an invitation whose email could not be sent is not kept.
        await sendInvitationMessage(pool, messages, invitation, messagePayload).catch(async (error: unknown) => {
          await deleteInvitation(pool, invitation.id);
          throw error;
        });
      }
      return invitation;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organization-invitations/:id/message',
      summary: 'Email a pending invitation (again) to its invitee, with this payload',
      tag,
      params: idParams,
      body: invitationMessagePayload,
      errors: [404, 422, 501, 502],
      transaction: false,
    },
    async ({ params, body }, _ctx, pool) => {
      const invitation = await getInvitation(pool, params.id);
      if (invitation.status !== 'Pending') {
        throw new RequestError('request.invalid_input', {
          details: `Only a pending invitation is sent (this one is ${invitation.status}).`,
        });
      }
      await sendInvitationMessage(pool, messages, invitation, body);
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
