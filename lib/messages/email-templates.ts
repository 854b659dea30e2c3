import { codeTtlMs, type CodePurpose } from './codes.ts';

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
