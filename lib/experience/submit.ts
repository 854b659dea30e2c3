import type { Knex } from 'knex';
import type { Context } from 'koa';
import type { Interaction, Provider } from 'oidc-provider';

import { scopesHeldByUser } from '../permissions/held-scopes.ts';
import { oidcScopes } from '../oidc/account.ts';
import { asksPersonForConsent } from '../oidc/consent-policy.ts';
import { findResourceCached } from '../oidc/resource-servers.ts';
import type { SharedCache } from '../storage/shared-cache.ts';

const providerScopes = new Set(oidcScopes);

const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];

/**
 * Consent for a first-party application, given on the user's behalf: the OpenID scopes asked for,
 * and on each requested API resource the asked scopes the user holds (the token endpoint narrows
 * again to what they hold when the token is issued).
 */
export async function grantConsent(
  provider: Provider,
  db: Knex,
  cache: SharedCache,
  interaction: Interaction,
  userId: string,
): Promise<string> {
  const { params } = interaction;
  const clientId = String(params.client_id);
  const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
  const grant = existing ?? new provider.Grant({ accountId: userId, clientId });
  const requested = (typeof params.scope === 'string' ? params.scope : '').split(' ').filter(Boolean);
  grant.addOIDCScope(requested.filter((scope) => providerScopes.has(scope)).join(' '));
  const resourceScopes = requested.filter((scope) => !providerScopes.has(scope));
  for (const indicator of asList(params.resource)) {
    const resource = await findResourceCached(db, cache)(indicator);
    if (resource) {
      const held = new Set(await scopesHeldByUser(db, cache, userId, resource.id));
      grant.addResourceScope(indicator, resourceScopes.filter((scope) => held.has(scope)).join(' '));
    }
  }
  return grant.save();
}

/**
 * Ends the interaction signed in as `userId`; returns where the browser goes next (back to
 * /oidc/auth). A first-party application is consented to here; for a third-party one, or with
 * `prompt=consent`, the provider then asks for consent and sends the browser to the consent page.
 */
export async function finishSignIn(
  ctx: Context,
  provider: Provider,
  db: Knex,
  cache: SharedCache,
  interaction: Interaction,
  userId: string,
): Promise<string> {
  const login = { accountId: userId };
  const result = (await asksPersonForConsent(db, interaction.params))
    ? { login }
    : { login, consent: { grantId: await grantConsent(provider, db, cache, interaction, userId) } };
  return provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
}
