import { z } from 'zod';

import { getApplication } from '../../applications/applications.ts';
import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import {
  addConsentScopes,
  consentScopesOf,
  deleteConsentScope,
  existingOrganizationScopeIds,
  existingScopeIds,
} from './consent-scope-queries.ts';
import { assignConsentScopesBody, consentScopesSchema, consentScopeTypes } from './consent-scope-schemas.ts';

const tag = 'Applications';
const idParams = z.object({ id: z.string().min(1).max(64) });

/**
 * Logto's user consent scopes: what a third-party application's consent page may ask a person for,
 * and so all that its grant can hold (consent-policy.ts). A first-party application is consented
 * to on the person's behalf and has none.
 */
export function consentScopeRoutes(api: Api): void {
  api.add(
    {
      method: 'post',
      path: '/applications/:id/user-consent-scopes',
      summary: 'Add user consent scopes to a third-party application',
      tag,
      params: idParams,
      body: assignConsentScopesBody,
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const application = await getApplication(trx, params.id);
      if (!application.isThirdParty) {
        throw new RequestError('application.third_party_application_only');
      }
      const resourceIds = [...(body.resourceScopes ?? []), ...(body.organizationResourceScopes ?? [])];
      const [resources, organizations] = await Promise.all([
        existingScopeIds(trx, resourceIds),
        existingOrganizationScopeIds(trx, body.organizationScopes ?? []),
      ]);
      const missing = [
        ...resourceIds.filter((id) => !resources.has(id)),
        ...(body.organizationScopes ?? []).filter((id) => !organizations.has(id)),
      ];
      if (missing.length > 0) {
        throw new RequestError('application.user_consent_scopes_not_found', { scopeIds: [...new Set(missing)] });
      }
      await addConsentScopes(trx, params.id, body);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/applications/:id/user-consent-scopes',
      summary: 'List the user consent scopes of an application',
      tag,
      params: idParams,
      response: consentScopesSchema,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getApplication(trx, params.id);
      return consentScopesOf(trx, params.id);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/applications/:id/user-consent-scopes/:scopeType/:scopeId',
      summary: 'Remove a user consent scope from an application',
      tag,
      params: idParams.extend({ scopeType: z.enum(consentScopeTypes), scopeId: z.string().min(1).max(128) }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getApplication(trx, params.id);
      if (!(await deleteConsentScope(trx, params.id, params.scopeType, params.scopeId))) {
        throw new RequestError('entity.not_found', {
          reason: `The application has no ${params.scopeType.replace(/s$/, '')} ${params.scopeId}.`,
        });
      }
    },
  );
}
