import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { messagePurposes } from '../messages/codes.ts';
import { developmentMessagesPageSize, listDevelopmentMessages } from '../messages/development.ts';
import { storedDetailsSchema } from '../messages/email-template-schemas.ts';

/** A verification code has its `code`; an organization invitation its `link` (and a `code` if its sender gave one). */
const message = z.object({
  id: z.string(),
  recipient: z.string(),
  type: z.enum(['email', 'phone']),
  // A webhook's disabled notice too (lib/hooks/delivery/endpoint-health.ts).
  purpose: z.enum([...messagePurposes, 'HookDisabled']),
  code: z.string().optional(),
  link: z.string().optional(),
  /** The language the message was asked in, and the operator's email template it was written from. */
  locale: z.string().optional(),
  template: storedDetailsSchema.optional(),
  createdAt: z.number(),
});

/**
 * The development connector's outbox, for admins and end-to-end tests. Not registered in production:
 * the path answers 404 there, and the OpenAPI document does not list it.
 */
export function developmentMessageRoutes(api: Api, { db, config }: ServiceContext): void {
  if (config.production) {
    return;
  }
  api.add(
    {
      method: 'get',
      path: '/verification-messages',
      summary: `List the messages kept instead of sent (not in production), newest first, at most ${developmentMessagesPageSize}`,
      tag: 'Development',
      query: z.object({ recipient: z.string().min(1).max(160).optional() }),
      response: z.array(message),
    },
    ({ query }) => listDevelopmentMessages(db, query.recipient),
  );
}
