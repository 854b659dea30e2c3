import type { AuditLog } from '../audit/audit-log.ts';
import type { ServiceContext } from '../http/context.ts';
import type { Connectors } from '../messages/index.ts';
import type { OidcService } from '../oidc/mount.ts';
import type { ExperienceSessions } from './session.ts';

/**
 * `ServiceContext` and what only the end user's APIs (the experience, the account) use. These come
 * from the audit log, the messages, the provider and the experience itself, which the domains below
 * cannot import: the domains get the narrower `ServiceContext`.
 */
export type ExperienceContext = ServiceContext & {
  audit: AuditLog;
  /** The verification-code senders. */
  messages: Connectors;
  oidc: OidcService;
  sessions: ExperienceSessions;
};
