import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { consumeOneTimeToken } from '../../one-time-tokens/tokens.ts';
import { generateId } from '../../storage/ids.ts';
import { email } from '../../users/schemas.ts';
import type { ExperienceContext } from '../context.ts';

const tag = 'Experience';

/**
 * A magic link's token, spent in the interaction: it proves the email (Logto's
 * `verification/one-time-token/verify`). A token made for one kind of interaction (its
 * `context.interactionEvent`) is refused in another and stays unspent.
 */
export function oneTimeTokenVerificationRoutes(
  api: Api<'own-transactions'>,
  { db, sessions }: ExperienceContext,
): void {
  api.add(
    {
      method: 'post',
      path: '/experience/verification/one-time-token/verify',
      summary: 'Verify an email by a one-time token (a magic link)',
      tag,
      body: z.strictObject({
        token: z.string().min(1).max(256),
        identifier: z.strictObject({ type: z.literal('email'), value: email }),
      }),
      response: z.object({ verificationId: z.string() }),
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const { state } = session;
      const token = await consumeOneTimeToken(db, body.token, body.identifier.value, ({ context }) => {
        if (context.interactionEvent && context.interactionEvent !== state.interactionEvent) {
          throw new RequestError('one_time_token.interaction_event_mismatch');
        }
      });
      const id = generateId();
      state.records[id] = {
        id,
        type: 'OneTimeToken',
        identifier: { type: 'email', value: token.email },
        jitOrganizationIds: token.context.jitOrganizationIds ?? [],
        verified: true,
      };
      await session.save(state);
      return { verificationId: id };
    },
  );
}
