import { z } from 'zod';

import { listConnectors, toConnector } from '../connectors/queries.ts';
import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { tenantId } from '../shared/tenant.ts';
import { listSsoConnectors } from '../sso/queries.ts';
import { currentCaptchaProvider } from './captcha/captcha-queries.ts';
import { publicCaptchaConfig, publicCaptchaConfigSchema } from './captcha/captcha-schemas.ts';
import { startedPasswordExpiration } from './password-expiration.ts';
import { type PasswordPolicy, passwordPolicySchema } from './password-policy.ts';
import { signInExperienceSchema } from './schemas.ts';
import {
  assertSignInExperienceChange,
  currentSignInExperience,
  saveSignInExperience,
  signInExperienceForUpdate,
} from './sign-in-experience.ts';
import { usernameCaseConflicts } from './username-case-queries.ts';

const tag = 'Sign-in experience';
const response = signInExperienceSchema.extend({ tenantId: z.string(), id: z.string() });

/**
 * Partial updates: each given top-level field replaces the stored one; the two policies and
 * `passkeySignIn` merge by field (the password policy's parts by theirs too, as Logto fills a
 * partial policy).
 */
const patchBody = signInExperienceSchema
  .extend({
    passwordPolicy: z
      .strictObject({
        length: passwordPolicySchema.shape.length.partial(),
        characterTypes: passwordPolicySchema.shape.characterTypes.partial(),
        rejects: passwordPolicySchema.shape.rejects.partial(),
      })
      .partial(),
    sentinelPolicy: signInExperienceSchema.shape.sentinelPolicy.partial(),
    passkeySignIn: signInExperienceSchema.shape.passkeySignIn.partial(),
  })
  .partial()
  .strict();

type PolicyChange = NonNullable<z.output<typeof patchBody>['passwordPolicy']>;

const mergePasswordPolicy = (current: PasswordPolicy, change: PolicyChange = {}): PasswordPolicy => ({
  length: { ...current.length, ...change.length },
  characterTypes: { ...current.characterTypes, ...change.characterTypes },
  rejects: { ...current.rejects, ...change.rejects },
});

export function signInExperienceRoutes(api: Api, { db, cache }: ServiceContext): void {
  api.add(
    { method: 'get', path: '/sign-in-exp', summary: 'Get the sign-in experience settings', tag, response },
    async () => ({ tenantId, id: 'default', ...(await currentSignInExperience(db, cache)) }),
  );

  api.add(
    {
      method: 'patch',
      path: '/sign-in-exp',
      summary: 'Update the sign-in experience settings',
      tag,
      body: patchBody,
      response,
      errors: [400, 422],
    },
    async ({ body }, _ctx, trx) => {
      const current = await signInExperienceForUpdate(trx);
      const next = {
        ...current,
        ...body,
        passwordPolicy: mergePasswordPolicy(current.passwordPolicy, body.passwordPolicy),
        sentinelPolicy: { ...current.sentinelPolicy, ...body.sentinelPolicy },
        passkeySignIn: { ...current.passkeySignIn, ...body.passkeySignIn },
        // Only empty lists pass (custom-ui.ts): cleared, they are Logto's `{}`.
        customUiCsp: {},
        passwordExpiration: startedPasswordExpiration(
          body.passwordExpiration ?? current.passwordExpiration,
          current.passwordExpiration,
        ),
      };
      assertSignInExperienceChange(next, body);
      if (!next.usernamePolicy.caseSensitive && current.usernamePolicy.caseSensitive) {
        // Two people named `Bob` and `bob` would become one sign-in name: they must be told apart first.
        const { totalConflicts } = await usernameCaseConflicts(trx, 0);
        if (totalConflicts > 0) {
          throw new RequestError('sign_in_experiences.username_policy_case_conflicts_exist', {
            count: totalConflicts,
          });
        }
      }
      await saveSignInExperience(trx, next);
      return { tenantId, id: 'default', ...next };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/sign-in-exp/username-policy/case-sensitivity-conflicts',
      summary: 'Usernames that differ only by case: what a case-insensitive username policy must not meet',
      tag,
      query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) }),
      response: z.object({
        totalConflicts: z.number(),
        samples: z.array(z.object({ usernameLower: z.string(), userIds: z.array(z.string()) })),
      }),
      errors: [400],
    },
    async ({ query }) => usernameCaseConflicts(db, query.limit),
  );
}

/**
 * What the sign-in page needs before anyone is signed in (Logto's `/.well-known/sign-in-exp`): the
 * settings, which hold no secret, the social and SSO connectors to offer, by name only, and while the
 * captcha policy is on, the captcha widget's type and site key (Logto's `captchaConfig`).
 */
export function publicSignInExperienceRoutes(api: Api, { db, cache }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/.well-known/sign-in-exp',
      summary: 'The sign-in experience as the sign-in page sees it',
      tag,
      response: response.extend({
        socialConnectors: z.array(
          z.object({ id: z.string(), target: z.string(), name: z.record(z.string(), z.string()), logo: z.string() }),
        ),
        ssoConnectors: z.array(z.object({ id: z.string(), connectorName: z.string(), logo: z.string().optional() })),
        captchaConfig: publicCaptchaConfigSchema.optional(),
      }),
    },
    async () => {
      const settings = await currentSignInExperience(db, cache);
      const captchaProvider = settings.captchaPolicy.enabled ? await currentCaptchaProvider(db, cache) : undefined;
      return {
        tenantId,
        id: 'default',
        ...settings,
        socialConnectors: (await listConnectors(db, cache)).map((connector) => {
          const { id, target, name, logo } = toConnector(connector);
          return { id, target, name, logo };
        }),
        // Single sign-on off: the page offers no SSO connector.
        ssoConnectors: (settings.singleSignOnEnabled ? await listSsoConnectors(db, cache) : []).map((connector) => ({
          id: connector.id,
          connectorName: connector.branding.displayName ?? connector.connectorName,
          logo: connector.branding.logo,
        })),
        ...(captchaProvider && { captchaConfig: publicCaptchaConfig(captchaProvider) }),
      };
    },
  );
}
