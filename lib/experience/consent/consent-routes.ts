import type { Interaction } from 'oidc-provider';
import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { organizationsScope } from '../../oidc/account.ts';
import { type Grantable, grantable } from '../../oidc/consent-policy.ts';
import { organizationIdsOfMember } from '../../organizations/members/member-queries.ts';
import { findOrganization } from '../../organizations/queries.ts';
import { findResourceByIndicator, findScopeByName } from '../../resources/queries.ts';
import type { Queryable } from '../../storage/database.ts';
import { findUserRow } from '../../users/queries.ts';
import type { ExperienceContext } from '../context.ts';
import { findPublicClient } from '../public-client.ts';
import { consentTo } from './consent.ts';

const tag = 'Experience';

/** The application as the hosted pages show it (Logto's public application, with its logo as `branding`). */
const publicApplication = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  isThirdParty: z.boolean(),
  branding: z.object({ logoUrl: z.string().optional() }),
  /**
   * For a client named by a URL (a Client ID Metadata Document): the URL's host, which the pages
   * show beside the name the client gives itself, so that a look-alike name cannot hide who it is.
   */
  clientIdHost: z.string().optional(),
});

const missingResourceScopes = z.object({
  resource: z.object({ id: z.string(), name: z.string(), indicator: z.string() }),
  scopes: z.array(z.object({ id: z.string(), name: z.string(), description: z.string().nullable() })),
});

/** Logto's `GET /api/interaction/consent` answer. */
const consentInfo = z.object({
  application: publicApplication,
  user: z.object({
    id: z.string(),
    name: z.string().nullable(),
    avatar: z.string().nullable(),
    username: z.string().nullable(),
    primaryEmail: z.string().nullable(),
    primaryPhone: z.string().nullable(),
  }),
  organizations: z.array(z.object({ id: z.string(), name: z.string() })),
  missingOIDCScope: z.array(z.string()),
  missingResourceScopes: z.array(missingResourceScopes),
  redirectUri: z.string(),
});

const redirect = z.object({ redirectTo: z.string() });

/** The scope names the provider found missing from the grant, per API resource indicator. */
const missingOf = (interaction: Interaction) => {
  const details = interaction.prompt.details as {
    missingOIDCScope?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  return { oidc: details.missingOIDCScope ?? [], resources: details.missingResourceScopes ?? {} };
};

/** The API scopes to show: what consent would grant (`grantable`), each with its description. */
async function describeResourceScopes(
  db: Queryable,
  allows: Grantable,
  resources: Record<string, string[]>,
): Promise<Array<z.infer<typeof missingResourceScopes>>> {
  const described = [];
  for (const [indicator, asked] of Object.entries(resources)) {
    const resource = await findResourceByIndicator(db, indicator);
    const names = resource ? await allows.resourceScopes(indicator, asked) : undefined;
    if (!resource || !names) {
      continue;
    }
    const scopes = [];
    for (const name of names) {
      const scope = await findScopeByName(db, resource.id, name);
      if (scope) {
        scopes.push({ id: scope.id, name: scope.name, description: scope.description });
      }
    }
    if (scopes.length > 0) {
      described.push({ resource: { id: resource.id, name: resource.name, indicator }, scopes });
    }
  }
  return described;
}

/** The organizations the application would learn of (the `organizations` claim), when it asks for them. */
async function organizationsAsked(db: Queryable, userId: string, missingOidcScopes: string[]) {
  if (!missingOidcScopes.includes(organizationsScope)) {
    return [];
  }
  const organizations = [];
  for (const id of await organizationIdsOfMember(db, 'user', userId)) {
    const organization = await findOrganization(db, id);
    if (organization) {
      organizations.push({ id: organization.id, name: organization.name });
    }
  }
  return organizations;
}

/**
 * The consent page's API (Logto's `/api/interaction/consent` and `DELETE /api/interaction`),
 * authenticated by the `_interaction` cookie like the Experience API. Consent is asked only once the
 * person has signed in, for a third-party application or with `prompt=consent` (consent-policy.ts).
 */
export function consentRoutes(
  api: Api<'own-transactions'>,
  { db, cache, config, oidc, sessions }: ExperienceContext,
): void {
  /** The interaction, which must be waiting for the signed-in person's consent. */
  async function consentInteraction(ctx: Parameters<typeof sessions.interaction>[0]) {
    const interaction = await sessions.interaction(ctx);
    const userId = interaction.session?.accountId;
    if (!userId) {
      throw new RequestError('session.not_found');
    }
    if (interaction.prompt.name !== 'consent') {
      throw new RequestError('session.invalid_interaction_type', {
        reason: 'This sign-in is not asking for consent.',
      });
    }
    return { interaction, userId };
  }

  api.add(
    {
      method: 'get',
      path: '/interaction/application',
      summary: 'The application this sign-in is for: its name and logo (for "Sign in to <name>")',
      tag,
      response: publicApplication,
      errors: [400, 404],
    },
    async (_input, ctx) => {
      const interaction = await sessions.interaction(ctx);
      const id = String(interaction.params.client_id);
      const application = await findPublicClient({ db, oidc }, id);
      if (!application) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'application', id });
      }
      return application;
    },
  );

  api.add(
    {
      method: 'get',
      path: '/interaction/consent',
      summary: 'What the application asks for: the application, the person, the scopes with their descriptions',
      tag,
      response: consentInfo,
      errors: [400],
    },
    async (_input, ctx) => {
      const { interaction, userId } = await consentInteraction(ctx);
      const clientId = String(interaction.params.client_id);
      const [application, user] = await Promise.all([
        findPublicClient({ db, oidc }, clientId),
        findUserRow(db, userId),
      ]);
      if (!application || !user) {
        throw new RequestError('session.not_found');
      }
      const missing = missingOf(interaction);
      const allows = await grantable(
        { db, cache, managementApiResource: config.managementApiResource },
        clientId,
        userId,
      );
      const oidcScopes = allows.oidcScopes(missing.oidc);
      return {
        application,
        user: {
          id: user.id,
          name: user.name,
          avatar: user.avatar,
          username: user.username,
          primaryEmail: user.primary_email,
          primaryPhone: user.primary_phone,
        },
        organizations: await organizationsAsked(db, userId, oidcScopes),
        // `openid` is not shown (as Logto); `offline_access` is, as "stay signed in" (Logto leaves it out).
        missingOIDCScope: oidcScopes.filter((scope) => scope !== 'openid'),
        missingResourceScopes: await describeResourceScopes(db, allows, missing.resources),
        redirectUri: String(interaction.params.redirect_uri),
      };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/interaction/consent',
      summary: 'Consent: records the grant and answers where the browser goes next (back to /oidc/auth)',
      tag,
      body: z.strictObject({}),
      response: redirect,
      errors: [400],
    },
    async (_input, ctx) => {
      const { interaction, userId } = await consentInteraction(ctx);
      return { redirectTo: await consentTo(ctx, { db, cache, config, oidc }, interaction, userId) };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/interaction',
      summary: 'Cancel the sign-in: the application receives error=access_denied',
      tag,
      response: redirect,
      errors: [400],
    },
    async (_input, ctx) => {
      await sessions.interaction(ctx);
      const provider = await oidc.provider();
      const redirectTo = await provider.interactionResult(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'End-User aborted interaction' },
        { mergeWithLastSubmission: false },
      );
      return { redirectTo };
    },
  );
}
