import { errors } from 'oidc-provider';

import { findResourcesByName } from '../../../resources/queries.ts';
import type { Resource } from '../../../resources/schemas.ts';
import type { Queryable } from '../../../storage/database.ts';
import type { SharedCache } from '../../../storage/shared-cache.ts';
import { findResourceCached } from '../../resource-servers.ts';

export const issuableTokenTypes = new Set([
  'urn:ietf:params:oauth:token-type:access_token',
  'urn:ietf:params:oauth:token-type:jwt',
]);

/** RFC 8693 §2.1: we issue access tokens (JWTs); any other `requested_token_type` is refused. */
export function requestedTokenType(value: unknown): string | undefined {
  if (value === undefined || value === '') {
    return undefined;
  }
  if (typeof value !== 'string' || !issuableTokenTypes.has(value)) {
    throw new errors.InvalidRequest(
      `unsupported requested_token_type (supported: ${[...issuableTokenTypes].join(', ')})`,
    );
  }
  return value;
}

function assertResourceForm(resource: string): void {
  if (!URL.canParse(resource) || resource.includes('#')) {
    throw new errors.InvalidTarget('resource must be an absolute URI without a fragment (RFC 8707)');
  }
}

const valuesOf = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string' && item !== '');

/**
 * The API resource an exchange is for: `resource` (RFC 8707, an indicator) and `audience` (RFC 8693
 * §2.1, repeatable: an indicator or the resource's name), which together must name one resource.
 */
export function exchangeTarget(db: Queryable, cache: SharedCache) {
  const findByIndicator = findResourceCached(db, cache);
  const findByName = (name: string) => cache.get('resources', `name:${name}`, () => findResourcesByName(db, name));

  async function resourceOfAudience(audience: string): Promise<Resource> {
    const byIndicator = await findByIndicator(audience);
    if (byIndicator) {
      return byIndicator;
    }
    const byName = await findByName(audience);
    if (byName.length > 1) {
      throw new errors.InvalidTarget(`audience ${audience} names several API resources: use the indicator`);
    }
    if (!byName[0]) {
      throw new errors.InvalidTarget(
        `audience ${audience} is not a known API resource (neither an indicator nor a name)`,
      );
    }
    return byName[0];
  }

  return async (params: { resource?: unknown; audience?: unknown } | undefined): Promise<Resource> => {
    const [resource] = valuesOf(params?.resource);
    const audiences = valuesOf(params?.audience);
    if (!resource && audiences.length === 0) {
      throw new errors.InvalidTarget(
        'resource is required: the API resource indicator of the downstream API (or audience: its indicator or name)',
      );
    }
    const targets: Resource[] = [];
    if (resource) {
      assertResourceForm(resource);
      const found = await findByIndicator(resource);
      if (!found) {
        throw new errors.InvalidTarget(`resource ${resource} is not a known API resource`);
      }
      targets.push(found);
    }
    for (const audience of audiences) {
      targets.push(await resourceOfAudience(audience));
    }
    if (new Set(targets.map((target) => target.id)).size > 1) {
      throw new errors.InvalidTarget('resource and audience must name the same single API resource');
    }
    return targets[0];
  };
}
