import { useState } from 'preact/hooks';

import { api } from '../api.ts';
import { captchaToken } from '../captcha.tsx';
import { required, requiredPassword } from '../checks.ts';
import { startExternal } from '../flow.ts';
import { PasskeySignIn } from '../passkey-sign-in.tsx';
import { phrases } from '../phrases.ts';
import { Social } from '../social.tsx';
import { Field, Form, useForm } from '../ui.tsx';
import { useVerificationCode, VerificationCode } from '../verification-code.tsx';
import type { PageProps } from './page.ts';

/** Sign in with a username or email and a password, or with a code sent by email; with a passkey; or at a social connector. */
export function SignInPage({ finish }: PageProps) {
  const [byCode, setByCode] = useState(false);
  const [identifier, setIdentifier] = useState('');
  const [password, setPassword] = useState('');
  const emailCode = useVerificationCode();
  const form = useForm();

  return (
    <>
      {byCode ? (
        <section key="code" id="code-step" aria-labelledby="title">
          <VerificationCode
            id="sign-in"
            event="SignIn"
            state={emailCode}
            texts={phrases.signInCode}
            onVerified={async (verificationId) => {
              await api.identify(verificationId);
              await finish();
            }}
          />
          <button type="button" class="secondary" id="use-password" onClick={() => setByCode(false)}>
            {phrases.signIn.usePassword}
          </button>
        </section>
      ) : (
        <section key="password" id="password-step" aria-labelledby="title">
          <Form
            id="password-form"
            form={form}
            submit={{ label: phrases.signIn.submit, busy: phrases.signIn.submitting }}
            fieldFor={(error) => (error.field === 'password' ? 'password' : 'identifier')}
            onSubmit={async () => {
              const value = required('identifier', identifier, phrases.invalid.identifier);
              const secret = requiredPassword('password', password, phrases.invalid.password);
              const type = value.includes('@') ? 'email' : 'username';
              await api.start('SignIn', await captchaToken());
              if (type === 'email') {
                // An email of an enterprise SSO domain signs in at its IdP, not with a password here.
                const { connectorIds } = await api.ssoConnectorsFor(value);
                if (connectorIds[0]) {
                  await startExternal('sso', connectorIds[0]);
                  return;
                }
              }
              const { verificationId } = await api.verifyPassword({ type, value }, secret);
              await api.identify(verificationId);
              await finish();
            }}
          >
            <Field
              id="identifier"
              label={phrases.signIn.identifier}
              name="identifier"
              autocomplete="username webauthn"
              verbatim
              focus
              value={identifier}
              onInput={setIdentifier}
            />
            <Field
              id="password"
              label={phrases.signIn.password}
              type="password"
              name="password"
              autocomplete="current-password"
              value={password}
              onInput={setPassword}
            />
          </Form>
          <p class="aside">
            <a href="/reset-password">{phrases.signIn.forgotPassword}</a>
          </p>
          <button
            type="button"
            class="secondary"
            id="use-code"
            onClick={() => {
              if (!emailCode.address && identifier.includes('@')) {
                emailCode.setAddress(identifier.trim());
              }
              setByCode(true);
            }}
          >
            {phrases.signIn.useCode}
          </button>
          <PasskeySignIn finish={finish} />
        </section>
      )}
      <Social />
      <p class="footer">
        {phrases.signIn.noAccount} <a href="/register">{phrases.signIn.register}</a>
      </p>
    </>
  );
}
