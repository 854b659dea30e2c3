import type { Context } from 'koa';
import { errors, type Interaction } from 'oidc-provider';

import { grantAsked, isFirstParty } from '../../oidc/consent-policy.ts';
import type { ExperienceContext } from '../context.ts';

type ConsentDeps = Pick<ExperienceContext, 'db' | 'cache' | 'config' | 'oidc'>;

/**
 * Consents to what the interaction's request asks, as `userId`, and ends the consent prompt: the
 * answer is where the browser goes next (back to /oidc/auth, which then sends it to the application).
 */
export async function consentTo(
  ctx: Context,
  { db, cache, config, oidc }: ConsentDeps,
  interaction: Interaction,
  userId: string,
): Promise<string> {
  const provider = await oidc.provider();
  const grant =
    (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ??
    new provider.Grant({ accountId: userId, clientId: String(interaction.params.client_id) });
  await grantAsked(
    { db, cache, managementApiResource: config.managementApiResource },
    grant,
    interaction.params,
    userId,
  );
  const grantId = await grant.save();
  return provider.interactionResult(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/**
 * Logto's auto-consent at `GET /consent`: a first-party application's consent prompt (asked for by
 * `prompt=consent`, which Logto's SDK always sends, or by a native client) is answered on the
 * person's behalf, and the browser goes straight back to /oidc/auth; Logto's clients follow this
 * hop. Anything else (a third party, no interaction waiting for consent) is the consent page's.
 */
export async function firstPartyConsent(ctx: Context, deps: ConsentDeps): Promise<string | undefined> {
  const provider = await deps.oidc.provider();
  let interaction: Interaction;
  try {
    interaction = await provider.interactionDetails(ctx.req, ctx.res);
  } catch (error) {
    if (error instanceof errors.SessionNotFound) {
      return undefined;
    }
    throw error;
  }
  const userId = interaction.session?.accountId;
  if (!userId || interaction.prompt.name !== 'consent') {
    return undefined;
  }
  const client = await provider.Client.find(String(interaction.params.client_id));
  return client && isFirstParty(client) ? consentTo(ctx, deps, interaction, userId) : undefined;
}
