import type { Context } from 'koa';
import { errors, type Interaction } from 'oidc-provider';

import { RequestError } from '../http/errors.ts';
import type { OidcService } from '../oidc/mount.ts';
import { noteAuditSubject } from '../shared/request-subject.ts';
import type { Queryable } from '../storage/database.ts';
import { type ExperienceState, findState, saveState } from './state-queries.ts';

export type ExperienceSession = {
  interaction: Interaction;
  state: ExperienceState;
  save(state: ExperienceState): Promise<void>;
};

/**
 * The experience API is authenticated by the provider's `_interaction` cookie, set by /oidc/auth:
 * without it, 400 `session.not_found`; without `PUT /api/experience` first, 404
 * `session.interaction_not_found`.
 */
export function experienceSessions(db: Queryable, oidc: OidcService) {
  async function interaction(ctx: Context): Promise<Interaction> {
    const provider = await oidc.provider();
    try {
      return await provider.interactionDetails(ctx.req, ctx.res);
    } catch (error) {
      if (error instanceof errors.SessionNotFound) {
        throw new RequestError('session.not_found');
      }
      throw error;
    }
  }

  const saver = (details: Interaction) => (state: ExperienceState) =>
    saveState(db, details.uid, state, details.exp * 1000);

  return {
    interaction,
    saver,
    async load(ctx: Context): Promise<ExperienceSession> {
      const details = await interaction(ctx);
      const state = await findState(db, details.uid);
      if (!state) {
        throw new RequestError('session.interaction_not_found');
      }
      noteAuditSubject(ctx, {
        kind: 'interaction',
        userId: state.userId,
        applicationId: String(details.params.client_id),
        interactionEvent: state.interactionEvent,
        identifiers: new Map(
          Object.values(state.records).flatMap((record) =>
            'identifier' in record ? [[record.id, record.identifier] as const] : [],
          ),
        ),
      });
      return { interaction: details, state, save: saver(details) };
    },
  };
}

export type ExperienceSessions = ReturnType<typeof experienceSessions>;
