import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import type { ComponentChildren } from 'preact';

import { api } from './api.ts';
import { phrases } from './phrases.ts';
import { Action, Form, useForm } from './ui.tsx';

/** The passkey steps' texts, from the catalogue. */
export const passkeyPhrases = phrases.passkey;

/** Proves the second factor with one of the account's passkeys: the browser asks the authenticator. */
export function PasskeyVerify({ finish, actions }: { finish: () => Promise<void>; actions?: ComponentChildren }) {
  const form = useForm();
  return (
    <section id="mfa-passkey" aria-labelledby="mfa-passkey-title">
      <h2 id="mfa-passkey-title" tabindex={-1}>
        {passkeyPhrases.verifyTitle}
      </h2>
      <p class="hint">{passkeyPhrases.verifyIntro}</p>
      <Form
        id="mfa-passkey-form"
        form={form}
        submit={{ label: passkeyPhrases.use, busy: passkeyPhrases.verifying, focus: true }}
        onSubmit={async () => {
          const { verificationId, authenticationOptions } = await api.passkeyAuthentication();
          const answer = await startAuthentication({ optionsJSON: authenticationOptions });
          await api.verifyPasskeyAuthentication(verificationId, answer);
          await finish();
        }}
        actions={actions}
      />
    </section>
  );
}

/**
 * Sets up a passkey as the second factor; when an authenticator app is offered too, `useApp` turns
 * to its set-up instead, and an optional second factor can be declined.
 */
export function PasskeyEnrol({
  skippable,
  finish,
  useApp,
}: {
  skippable: boolean;
  finish: () => Promise<void>;
  useApp?: () => Promise<void>;
}) {
  const form = useForm();
  return (
    <section id="mfa-passkey-enrol" aria-labelledby="mfa-passkey-enrol-title">
      <h2 id="mfa-passkey-enrol-title" tabindex={-1}>
        {passkeyPhrases.addTitle}
      </h2>
      <p class="hint">{passkeyPhrases.addIntro}</p>
      <Form
        id="mfa-passkey-enrol-form"
        form={form}
        submit={{ label: passkeyPhrases.add, busy: passkeyPhrases.adding, focus: true }}
        onSubmit={async () => {
          const { verificationId, registrationOptions } = await api.passkeyRegistration();
          const answer = await startRegistration({ optionsJSON: registrationOptions });
          await api.verifyPasskeyRegistration(verificationId, answer);
          await api.addMfa('WebAuthn', verificationId);
          await finish();
        }}
        actions={
          <div class="actions">
            {useApp && (
              <Action class="link" onClick={() => void form.run(useApp)}>
                {passkeyPhrases.useApp}
              </Action>
            )}
            {skippable && (
              <Action
                class="secondary"
                onClick={() =>
                  void form.run(async () => {
                    await api.skipMfa();
                    await finish();
                  })
                }
              >
                {passkeyPhrases.notNow}
              </Action>
            )}
          </div>
        }
      />
    </section>
  );
}
