import { codeTtlMs, type CodePurpose } from './codes.ts';
import type { HookDisabledMessage, InvitationMessage } from './message-connector.ts';
import { oneLine } from './render-template.ts';

/*
 * The built-in emails: sent where no operator's template (email_templates) matches the message.
 */

type Wording = { subject: string; intro: string };

const signIn: Wording = { subject: 'Your sign-in code', intro: 'Use this code to sign in:' };
const register: Wording = {
  subject: 'Your registration code',
  intro: 'Use this code to finish creating your account:',
};
const reset: Wording = { subject: 'Your password reset code', intro: 'Use this code to reset your password:' };
const generic: Wording = { subject: 'Your verification code', intro: 'Use this code to verify your identity:' };

const wordings: Record<CodePurpose, Wording> = {
  SignIn: signIn,
  MfaVerification: signIn,
  Register: register,
  ForgotPassword: reset,
  Generic: generic,
  UserPermissionValidation: generic,
  BindNewIdentifier: generic,
  BindMfa: generic,
};

const minutes = codeTtlMs / 60_000;
const ignore = 'If you did not ask for it, you can ignore this message.';

/**
 * The email for a code: plain text for every client, and a minimal HTML part with the code large.
 * Nothing user-supplied goes in, so the HTML needs no escaping (the code is digits).
 */
export function renderCodeEmail(purpose: CodePurpose, code: string): { subject: string; text: string; html: string } {
  const { subject, intro } = wordings[purpose];
  return {
    subject,
    text: `${intro}\n\n${code}\n\nIt expires in ${minutes} minutes. ${ignore}\n`,
    html: [
      '<!doctype html><html><body style="font-family: sans-serif">',
      `<p>${intro}</p>`,
      `<p style="font-size: 28px; font-weight: bold; letter-spacing: 4px">${code}</p>`,
      `<p>It expires in ${minutes} minutes. ${ignore}</p>`,
      '</body></html>',
    ].join('\n'),
  };
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/**
 * The invitation email (Logto's `OrganizationInvitation` template): who invites, to which
 * organization, the link to accept and the caller's code if any, with the organization's logo in the
 * HTML part. Organization and inviter names, the link and the logo URL come from users: escaped.
 */
export function renderInvitationEmail({ link, code, organization, inviter }: InvitationMessage): {
  subject: string;
  text: string;
  html: string;
} {
  const organizationName = oneLine(organization.name);
  const inviterName = inviter && oneLine(inviter.name ?? inviter.username ?? inviter.primaryEmail ?? '');
  const invited = inviterName
    ? `${inviterName} invited you to join ${organizationName}.`
    : `You are invited to join ${organizationName}.`;
  const codeLine = code === undefined ? [] : [`Your invitation code: ${code}`];
  const unexpected = 'If you did not expect this invitation, you can ignore this message.';
  const { logoUrl } = organization.branding;
  return {
    subject: `You are invited to join ${organizationName}`,
    text: [invited, `Accept the invitation: ${link}`, ...codeLine, unexpected].join('\n\n') + '\n',
    html: [
      '<!doctype html><html><body style="font-family: sans-serif">',
      ...(logoUrl
        ? [`<p><img src="${escapeHtml(logoUrl)}" alt="${escapeHtml(organizationName)}" height="48"></p>`]
        : []),
      `<p>${escapeHtml(invited)}</p>`,
      `<p><a href="${escapeHtml(link)}" style="font-size: 18px; font-weight: bold">Accept the invitation</a></p>`,
      `<p>Or open this link: ${escapeHtml(link)}</p>`,
      ...codeLine.map((line) => `<p>${escapeHtml(line)}</p>`),
      `<p>${unexpected}</p>`,
      '</body></html>',
    ].join('\n'),
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
