import {
  type AuthenticationResponseJSON,
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  startAuthentication,
  WebAuthnAbortService,
} from '@simplewebauthn/browser';
import { useEffect, useState } from 'preact/hooks';

import { api, ApiError, type PublicSettings } from './api.ts';
import { publicSettings } from './branding.ts';
import { Invalid } from './checks.ts';
import { phrases } from './phrases.ts';
import { Action, Form, useForm } from './ui.tsx';

/** The browser's passkey prompt for any passkey of this site (`autofill`: offered in the username field's suggestions). */
async function askForPasskey(autofill: boolean): Promise<AuthenticationResponseJSON> {
  const { authenticationOptions } = await api.passkeySignInOptions();
  try {
    return await startAuthentication({ optionsJSON: authenticationOptions, useBrowserAutofill: autofill });
  } catch (error) {
    // Dismissed, timed out, or no passkey for this site on the device: the browser does not say which.
    if (error instanceof Error && error.name === 'NotAllowedError') {
      throw new Invalid('', phrases.passkeySignIn.notUsed);
    }
    throw error;
  }
}

/** Signs in with the passkey the browser chose: its answer names the account. */
async function signInWith(answer: AuthenticationResponseJSON, finish: () => Promise<void>): Promise<void> {
  try {
    const { verificationId } = await api.verifyPasskeySignIn(answer);
    await api.identify(verificationId);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'session.mfa.webauthn_verification_failed') {
      throw new Invalid('', phrases.passkeySignIn.notRecognised);
    }
    throw error;
  }
  await finish();
}

/**
 * Passkey sign-in, as the sign-in experience's `passkeySignIn` offers it: a "Sign in with a passkey"
 * button, and the browser's autofill (conditional UI) in the username field, where the browser has it.
 * The field must say `autocomplete="username webauthn"` for the autofill.
 */
export function PasskeySignIn({ finish }: { finish: () => Promise<void> }) {
  const form = useForm();
  const [offer, setOffer] = useState<PublicSettings['passkeySignIn']>();
  useEffect(() => {
    let mounted = true;
    void publicSettings().then(async (settings) => {
      const offered = settings?.passkeySignIn;
      if (!offered?.enabled || !browserSupportsWebAuthn()) {
        return;
      }
      setOffer(offered);
      if (offered.allowAutofill && (await browserSupportsWebAuthnAutofill())) {
        // Waits until the person picks a passkey in the field's suggestions; the button's prompt cancels it.
        const answer = await askForPasskey(true).catch(() => undefined);
        if (answer && mounted) {
          void form.run(() => signInWith(answer, finish));
        }
      }
    });
    return () => {
      mounted = false;
      WebAuthnAbortService.cancelCeremony();
    };
  }, []);
  if (!offer) {
    return null;
  }
  return (
    <section id="passkey-sign-in" aria-label={phrases.passkeySignIn.label}>
      <Form id="passkey-sign-in-form" form={form}>
        {offer.showPasskeyButton && (
          <Action
            class="secondary"
            onClick={() => void form.run(async () => signInWith(await askForPasskey(false), finish))}
          >
            {form.busy ? phrases.passkeySignIn.waiting : phrases.passkeySignIn.label}
          </Action>
        )}
      </Form>
    </section>
  );
}
