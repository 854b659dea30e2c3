import type { CodePurpose } from './codes.ts';

/** One verification message: `to` is the email address, or the phone number in E.164 digits without '+'. */
export type VerificationMessage = { to: string; type: 'email' | 'phone'; purpose: CodePurpose; code: string };

/** Delivers verification messages: SMTP, the development store, or another provider (SMS) behind the same call. */
export interface MessageConnector {
  /** Resolves once the provider has accepted the message; rejects when it could not be handed over. */
  send(message: VerificationMessage): Promise<void>;
}
