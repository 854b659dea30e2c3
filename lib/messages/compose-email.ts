import type { Queryable } from '../storage/database.ts';
import { type EmailLook, renderCodeEmail, renderHookDisabledEmail, renderInvitationEmail } from './built-in-emails.ts';
import { codeTtlMs, type MessagePurpose } from './codes.ts';
import { findEmailTemplateFor } from './email-template-queries.ts';
import { languageTagSchema } from './email-template-schemas.ts';
import type { Message, TemplatedMessage } from './message-connector.ts';
import { type RenderedEmail, renderTemplate, type TemplateDetails, type TemplateVariables } from './render-template.ts';

/** The language of templates looked up when the message's own has none (Logto's default fallback language). */
export const defaultLanguage = 'en';

/** The message's language, its primary language (`fr` for `fr-CA`), then the default: each tried in turn. */
function languagesFor(locale: string | undefined): string[] {
  const wanted = locale !== undefined && languageTagSchema.safeParse(locale).success ? [locale] : [];
  const primary = wanted.map((tag) => tag.split('-')[0]);
  return [...new Set([...wanted, ...primary, defaultLanguage])];
}

/**
 * The operator's template for a message, as Logto finds it: its type in the message's language,
 * then in the default language; a verification code with no template of its own takes the
 * `Generic` one. An invitation does not: a generic template has no `{{link}}` to accept with.
 */
export async function findTemplateFor(
  db: Queryable,
  purpose: MessagePurpose,
  locale?: string,
): Promise<TemplateDetails | undefined> {
  const types: MessagePurpose[] =
    purpose === 'OrganizationInvitation' || purpose === 'Generic' ? [purpose] : [purpose, 'Generic'];
  for (const type of types) {
    for (const language of languagesFor(locale)) {
      const template = await findEmailTemplateFor(db, type, language);
      if (template) {
        return template.details;
      }
    }
  }
  return undefined;
}

/**
 * The variables a template of the message's type may use (Logto's names): `code` for a verification
 * code (and `expiresInMinutes`, and `application` and `user` where the sign-in knows them); `link`,
 * `code`, `organization` and `inviter` for an invitation; `locale` when the message has a language.
 */
export function variablesOf(message: TemplatedMessage): TemplateVariables {
  if (message.purpose !== 'OrganizationInvitation') {
    const { code, application, user, locale } = message;
    return {
      code,
      expiresInMinutes: codeTtlMs / 60_000,
      ...(application && { application: { ...application } }),
      ...(user && { user: { ...user } }),
      ...(locale !== undefined && { locale }),
    };
  }
  const { link, code, organization, inviter } = message;
  return {
    link,
    code,
    organization: { id: organization.id, name: organization.name, branding: { ...organization.branding } },
    ...(inviter && {
      inviter: {
        id: inviter.id,
        name: inviter.name ?? inviter.username ?? inviter.primaryEmail ?? undefined,
        username: inviter.username ?? undefined,
        primaryEmail: inviter.primaryEmail ?? undefined,
      },
    }),
    ...(message.locale !== undefined && { locale: message.locale }),
  };
}

/** Finds the operator's template for a message's purpose and language (`findTemplateFor` on a database). */
export type TemplateLookup = (purpose: MessagePurpose, locale?: string) => Promise<TemplateDetails | undefined>;

/** Where emails come from: the operator's templates, and the built-in emails' language and branding. */
export type EmailSources = { templates: TemplateLookup; look: (locale: string | undefined) => Promise<EmailLook> };

/** The email for a message: from the operator's template where one matches, else the built-in one. */
export async function composeEmail({ templates, look }: EmailSources, message: Message): Promise<RenderedEmail> {
  if (message.purpose === 'HookDisabled') {
    return renderHookDisabledEmail(message);
  }
  const template = await templates(message.purpose, message.locale);
  if (template) {
    return renderTemplate(template, variablesOf(message));
  }
  return message.purpose === 'OrganizationInvitation'
    ? renderInvitationEmail(message, await look(message.locale))
    : renderCodeEmail(message, await look(message.locale));
}
