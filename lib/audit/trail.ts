import type { Context, Middleware } from 'koa';
import { z } from 'zod';

import type { AnySpec } from '../http/api/route.ts';
import { type AuditSubject, auditSubjectOf } from '../shared/request-subject.ts';
import type { AuditLog } from './audit-log.ts';
import type { LogPayload } from './queries.ts';

const managementWriteLogKey = 'Management.Write';

const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Path ids are bounded by their routes' schemas, but a refused request's are whatever was sent. */
const idLength = 128;
const idsPerField = 100;
/** Body fields that name other entities (`userIds`, `roleIds`, `organizationId`): their values are ids, kept as targets. */
const idField = /[a-z](Id|Ids)$/;

type Answered = Context & { _matchedRoute?: unknown; params?: Record<string, string> };
type Identifier = { type: string; value: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The top-level field names a body schema knows: only these are ever recorded, never a sender's own keys. */
function fieldNames(schema: z.ZodType | undefined): string[] {
  if (schema instanceof z.ZodObject) {
    return Object.keys(schema.shape);
  }
  if (schema instanceof z.ZodUnion) {
    return (schema.options as z.ZodType[]).flatMap(fieldNames);
  }
  if (schema instanceof z.ZodPipe) {
    return fieldNames(schema.in as z.ZodType);
  }
  return [];
}

/** A body field's id or ids, bounded; anything else it holds is not an id and is left out. */
function idsIn(name: string, value: unknown): Array<[string, string | string[]]> {
  const ids = (Array.isArray(value) ? value : [value]).filter(
    (id): id is string => typeof id === 'string' && id.length > 0 && id.length <= idLength,
  );
  if (ids.length === 0) {
    return [];
  }
  return [[name, Array.isArray(value) ? ids.slice(0, idsPerField) : ids[0]]];
}

function identifierIn(value: unknown): Identifier | undefined {
  return isRecord(value) && typeof value.type === 'string' && typeof value.value === 'string'
    ? { type: value.type, value: value.value }
    : undefined;
}

const codeType = (body: Record<string, unknown>) =>
  identifierIn(body.identifier)?.type === 'phone' ? 'PhoneVerificationCode' : 'EmailVerificationCode';

/** The end-user proofs whose refusals are recorded, by route, with Logto's verification type. */
const proofs = new Map<string, (body: Record<string, unknown>) => string>([
  ['/api/experience/verification/password', () => 'Password'],
  ['/api/experience/verification/verification-code/verify', codeType],
  ['/api/experience/verification/totp/verify', () => 'Totp'],
  [
    '/api/experience/verification/mfa-verification-code/verify',
    (body) => (body.identifierType === 'phone' ? 'PhoneVerificationCode' : 'EmailVerificationCode'),
  ],
  ['/api/experience/verification/backup-code/verify', () => 'BackupCode'],
  ['/api/experience/verification/web-authn/registration/verify', () => 'WebAuthn'],
  ['/api/experience/verification/web-authn/authentication/verify', () => 'WebAuthn'],
  ['/api/experience/verification/sign-in-passkey/authentication/verify', () => 'SignInPasskey'],
  ['/api/experience/verification/social/:connectorId/verify', () => 'Social'],
  ['/api/experience/verification/sso/:connectorId/verify', () => 'EnterpriseSso'],
  ['/api/verifications/password', () => 'Password'],
  ['/api/verifications/verification-code/verify', codeType],
  ['/api/verifications/web-authn/registration/verify', () => 'WebAuthn'],
]);

/** Logto's keys: `Interaction.SignIn.Verification.Password.Submit`, `Interaction.SignIn.Identifier.Submit`; ours for the Account API. */
function failureKey(
  subject: AuditSubject,
  route: string,
  body: Record<string, unknown>,
  code: string | undefined,
): string | undefined {
  const proof = proofs.get(route);
  if (subject.kind === 'account') {
    return proof && `Account.Verification.${proof(body)}.Submit`;
  }
  if (proof) {
    return `Interaction.${subject.interactionEvent}.Verification.${proof(body)}.Submit`;
  }
  // A sign-in's identification that asks for more profile is a step, not a refusal.
  if (
    route === '/api/experience/identification' &&
    subject.interactionEvent === 'SignIn' &&
    code !== 'user.missing_profile'
  ) {
    return 'Interaction.SignIn.Identifier.Submit';
  }
  return undefined;
}

const errorCode = (ctx: Context): string | undefined =>
  isRecord(ctx.body) && typeof ctx.body.code === 'string' ? ctx.body.code : undefined;

const origin = (ctx: Context): Pick<LogPayload, 'ip' | 'userAgent'> => ({
  ip: ctx.ip,
  userAgent: ctx.get('user-agent') || undefined,
});

/**
 * The audit trail of the API, written after each answer (into the batched log: nothing waits on it):
 * every management API write, refused or not, with its actor, route pattern, target ids and status
 * (`Management.Write`); every refused end-user verification or sign-in identification, with the
 * identifier, the reason (error code) and where it came from. Requests that never reached an
 * authenticated actor or an interaction (a bad token, a malformed body) are not recorded: they verify
 * nothing, and would let anyone fill the log. Bodies are never stored: ids, and field names the route
 * declares.
 */
export function auditTrail(audit: AuditLog, managementSpecs: AnySpec[]): Middleware {
  const fieldsByRoute = new Map(
    managementSpecs.map((spec) => [`${spec.method.toUpperCase()} /api${spec.path}`, new Set(fieldNames(spec.body))]),
  );

  function recordWrite(ctx: Answered, subject: AuditSubject, route: string): void {
    const failed = ctx.status >= 400;
    const params = Object.fromEntries(
      Object.entries(ctx.params ?? {}).map(([name, value]) => [name, value.slice(0, idLength)]),
    );
    const body = ctx.body;
    const createdId =
      !failed &&
      ctx.method === 'POST' &&
      isRecord(body) &&
      typeof body.id === 'string' &&
      !Object.values(params).includes(body.id)
        ? body.id
        : undefined;
    const known = fieldsByRoute.get(`${ctx.method} ${route}`);
    const sent = (ctx.request as { body?: unknown }).body;
    const fields = known && isRecord(sent) ? Object.keys(sent).filter((name) => known.has(name)) : [];
    const bodyIds = Object.fromEntries(
      fields
        .filter((name) => idField.test(name) && name !== 'tenantId')
        .flatMap((name) => idsIn(name, (sent as Record<string, unknown>)[name])),
    );
    const code = errorCode(ctx);
    audit.record(
      managementWriteLogKey,
      {
        result: failed ? 'Error' : 'Success',
        ...(failed && code && { error: { code } }),
        status: ctx.status,
        method: ctx.method,
        route,
        params,
        ...(createdId && { createdId }),
        ...(fields.length > 0 && { fields }),
        ...(Object.keys(bodyIds).length > 0 && { bodyIds }),
        userId: subject.userId,
        applicationId: subject.applicationId,
        ...origin(ctx),
      },
      [...Object.values(params), ...(createdId ? [createdId] : []), ...Object.values(bodyIds).flat()],
    );
  }

  function recordFailure(ctx: Answered, subject: AuditSubject, route: string): void {
    const sent = (ctx.request as { body?: unknown }).body;
    const body = isRecord(sent) ? sent : {};
    const code = errorCode(ctx);
    const key = failureKey(subject, route, body, code);
    if (!key) {
      return;
    }
    const verificationId = typeof body.verificationId === 'string' ? body.verificationId : undefined;
    const identifier =
      identifierIn(body.identifier) ?? (verificationId ? subject.identifiers?.get(verificationId) : undefined);
    audit.record(key, {
      result: 'Error',
      ...(code && { error: { code } }),
      status: ctx.status,
      ...(identifier && { identifier }),
      userId: subject.userId,
      applicationId: subject.applicationId,
      ...origin(ctx),
    });
  }

  return async (ctx: Answered, next) => {
    await next();
    const route = ctx._matchedRoute;
    const subject = auditSubjectOf(ctx);
    if (typeof route !== 'string' || !subject) {
      return;
    }
    if (subject.kind === 'management') {
      if (writeMethods.has(ctx.method)) {
        recordWrite(ctx, subject, route);
      }
    } else if (ctx.status >= 400 && ctx.status < 500) {
      recordFailure(ctx, subject, route);
    }
  };
}
