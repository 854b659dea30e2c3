import type { CodePurpose } from './codes.ts';

/**
 * Who and what a code is for, when the sender knows: the language of the sign-in it was asked from,
 * the application signed in to, and the user (a second factor's code goes to a known account).
 */
export type MessageAbout = {
  locale?: string;
  application?: { id: string; name: string };
  user?: { id: string; username?: string; primaryEmail?: string; name?: string };
};

/** One verification message: `to` is the email address, or the phone number in E.164 digits without '+'. */
export type VerificationMessage = {
  to: string;
  type: 'email' | 'phone';
  purpose: CodePurpose;
  code: string;
} & MessageAbout;

/**
 * An invitation to join an organization, by email: Logto's `OrganizationInvitation` template and its
 * variables, `link` (where the invitee accepts, made by the caller), `organization`, and `inviter`
 * when the invitation names one; `code` when the caller gives one too; `locale`, the caller's language
 * for the email (Logto's `messagePayload.locale`).
 */
export type InvitationMessage = {
  to: string;
  type: 'email';
  purpose: 'OrganizationInvitation';
  link: string;
  code?: string;
  organization: { id: string; name: string; branding: { logoUrl?: string } };
  inviter?: { id: string; name: string | null; username: string | null; primaryEmail: string | null };
  locale?: string;
};

/**
 * A notice to whoever runs a webhook endpoint: the service disabled the hook (lib/hooks/delivery/endpoint-health.ts).
 * Not one of Logto's template types: it is always the built-in email.
 */
export type HookDisabledMessage = {
  to: string;
  type: 'email';
  purpose: 'HookDisabled';
  hookId: string;
  hookName: string;
  reason: string;
};

/** The messages an operator's email template may word (Logto's template types). */
export type TemplatedMessage = VerificationMessage | InvitationMessage;

export type Message = TemplatedMessage | HookDisabledMessage;

/** Delivers messages: SMTP, the development store, or another provider (SMS) behind the same call. */
export interface MessageConnector {
  /** Resolves once the provider has accepted the message; rejects when it could not be handed over. */
  send(message: Message): Promise<void>;
}
