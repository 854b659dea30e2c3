import { type Catalogue, type Translate, translator } from '../shared/phrases/index.ts';
import { type CodePurpose, codeTtlMs } from './codes.ts';
import type { HookDisabledMessage, InvitationMessage, VerificationMessage } from './message-connector.ts';
import { oneLine } from './render-template.ts';

/*
 * The built-in emails: sent where no operator's template (email_templates) matches the message, in
 * the message's language (the catalogue's `email` texts, custom phrases applied) and the sign-in
 * experience's branding (logo, primary colour).
 */

/** What a built-in email looks like and says: the language's catalogue and the sign-in experience's branding. */
export type EmailLook = {
  language: string;
  catalogue: Catalogue;
  /** The sign-in experience's logo (an organization's own logo comes first in its invitations). */
  logoUrl?: string;
  /** `#rrggbb`, as the sign-in experience's schema checks it. */
  primaryColor: string;
};

type Wording = 'signIn' | 'register' | 'reset' | 'generic';

const wordings: Record<CodePurpose, Wording> = {
  SignIn: 'signIn',
  MfaVerification: 'signIn',
  Register: 'register',
  ForgotPassword: 'reset',
  Generic: 'generic',
  UserPermissionValidation: 'generic',
  BindNewIdentifier: 'generic',
  BindMfa: 'generic',
};

const minutes = codeTtlMs / 60_000;

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/**
 * One layout for every built-in email: the logo (when there is one) above the paragraphs, in the
 * primary colour where there is colour. `body` is HTML already escaped; the colour is `#rrggbb`.
 */
function layout(look: EmailLook, { logo, body }: { logo?: { url: string; alt: string }; body: string[] }): string {
  const image = logo ?? (look.logoUrl && { url: look.logoUrl, alt: '' });
  return [
    `<!doctype html><html lang="${escapeHtml(look.language)}"><body style="font-family: sans-serif; color: #1f2937">`,
    `<div style="max-width: 480px; margin: 0 auto; padding: 24px; border-top: 4px solid ${look.primaryColor}">`,
    ...(image ? [`<p><img src="${escapeHtml(image.url)}" alt="${escapeHtml(image.alt)}" height="48"></p>`] : []),
    ...body,
    '</div>',
    '</body></html>',
  ].join('\n');
}

/**
 * The email for a code: plain text for every client, and HTML with the code large in the primary
 * colour. The application's name comes from its registration: escaped; the code is digits.
 */
export function renderCodeEmail(
  { purpose, code, application }: Pick<VerificationMessage, 'purpose' | 'code' | 'application'>,
  look: EmailLook,
): { subject: string; text: string; html: string } {
  const t: Translate = translator(look.language, look.catalogue);
  const wording = wordings[purpose];
  const intro = t(`email.${wording}.intro`);
  const forApplication = application ? [t('email.forApplication', { application: oneLine(application.name) })] : [];
  const closing = [t('email.expires', { minutes }), ...forApplication, t('email.ignore')].join(' ');
  return {
    subject: t(`email.${wording}.subject`),
    text: `${intro}\n\n${code}\n\n${closing}\n`,
    html: layout(look, {
      body: [
        `<p>${escapeHtml(intro)}</p>`,
        `<p style="font-size: 28px; font-weight: bold; letter-spacing: 4px; color: ${look.primaryColor}">${code}</p>`,
        `<p>${escapeHtml(closing)}</p>`,
      ],
    }),
  };
}

/**
 * The invitation email (Logto's `OrganizationInvitation` template): who invites, to which
 * organization, the link to accept and the caller's code if any, with the organization's logo (else
 * the sign-in experience's). Organization and inviter names, the link and the logo URL come from
 * users: escaped.
 */
export function renderInvitationEmail(
  { link, code, organization, inviter }: InvitationMessage,
  look: EmailLook,
): { subject: string; text: string; html: string } {
  const t: Translate = translator(look.language, look.catalogue);
  const organizationName = oneLine(organization.name);
  const inviterName = inviter && oneLine(inviter.name ?? inviter.username ?? inviter.primaryEmail ?? '');
  const invited = inviterName
    ? t('email.invitation.invitedBy', { inviter: inviterName, organization: organizationName })
    : t('email.invitation.invited', { organization: organizationName });
  const codeLine = code === undefined ? [] : [t('email.invitation.code', { code })];
  const unexpected = t('email.invitation.unexpected');
  const { logoUrl } = organization.branding;
  return {
    subject: t('email.invitation.subject', { organization: organizationName }),
    text: [invited, t('email.invitation.acceptAt', { link }), ...codeLine, unexpected].join('\n\n') + '\n',
    html: layout(look, {
      logo: logoUrl ? { url: logoUrl, alt: organizationName } : undefined,
      body: [
        `<p>${escapeHtml(invited)}</p>`,
        `<p><a href="${escapeHtml(link)}" style="display: inline-block; padding: 10px 18px; border-radius: 6px; background: ${look.primaryColor}; color: #ffffff; font-size: 18px; font-weight: bold; text-decoration: none">${escapeHtml(t('email.invitation.accept'))}</a></p>`,
        `<p>${escapeHtml(t('email.invitation.orOpen', { link }))}</p>`,
        ...codeLine.map((line) => `<p>${escapeHtml(line)}</p>`),
        `<p>${escapeHtml(unexpected)}</p>`,
      ],
    }),
  };
}

/** The notice that the service disabled a webhook: which one, why, and how to enable it again. */
export function renderHookDisabledEmail({ hookId, hookName, reason }: HookDisabledMessage): {
  subject: string;
  text: string;
  html: string;
} {
  const name = oneLine(hookName) || hookId;
  const lines = [
    `The webhook ${name} (${hookId}) was disabled: ${reason}`,
    'It receives no events until it is enabled again: fix the endpoint, then enable the hook in the console or with PATCH /api/hooks/' +
      `${hookId} {"enabled": true}.`,
  ];
  return {
    subject: `Webhook disabled: ${name}`,
    text: lines.join('\n\n') + '\n',
    html: [
      '<!doctype html><html><body style="font-family: sans-serif">',
      ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
      '</body></html>',
    ].join('\n'),
  };
}
