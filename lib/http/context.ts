import type { Knex } from 'knex';

import type { Config } from '../config/env.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import type { Logger } from './logger.ts';

/**
 * What every domain's routes are handed, built once by `createService`: `xRoutes(api, context)`.
 * It holds only what lies below the domains, so that any of them can import it; the Experience and
 * Account APIs, above the provider, get more (`experience/context.ts`).
 */
export type ServiceContext = { config: Config; db: Knex; cache: SharedCache; logger: Logger };
