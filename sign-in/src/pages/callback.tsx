import { useEffect, useRef, useState } from 'preact/hooks';

import { api, ApiError } from '../api.ts';
import { explain } from '../errors.ts';
import { isLeaving, takeExternal } from '../flow.ts';
import { phrases } from '../phrases.ts';
import { Action, Form, useForm } from '../ui.tsx';
import type { PageProps } from './page.ts';

/** The external identity becomes a new account (nobody has it, or the user would rather not link it). */
async function registerInstead(verificationId: string, finish: () => Promise<void>): Promise<void> {
  await api.changeEvent('Register');
  await api.identify(verificationId);
  await finish();
}

/** Back from a connector's IdP: redeem the callback, then sign in, register, or offer to link. */
export function CallbackPage({ finish }: PageProps) {
  const [query] = useState(() => new URLSearchParams(window.location.search));
  // What this browser kept when it left for the IdP: read once, and forgotten.
  const [started] = useState(() => takeExternal(query.get('state')));
  const [failure, setFailure] = useState(started ? undefined : phrases.callback.notStartedHere);
  const [relatedUser, setRelatedUser] = useState<string>();
  const status = useRef<HTMLParagraphElement>(null);

  useEffect(() => {
    if (failure) {
      status.current?.focus();
    }
  }, [failure]);

  useEffect(() => {
    if (!started) {
      return;
    }
    const { kind, connectorId, verificationId } = started;
    void (async () => {
      try {
        await api.verifyExternal(kind, connectorId, Object.fromEntries(query), verificationId);
        try {
          await api.identify(verificationId);
        } catch (error) {
          if (!(error instanceof ApiError) || error.code !== 'user.identity_not_exist') {
            throw error;
          }
          if (typeof error.data.relatedUser === 'string') {
            setRelatedUser(error.data.relatedUser);
          } else {
            await registerInstead(verificationId, finish);
          }
          return;
        }
        await finish();
      } catch (error) {
        if (!isLeaving()) {
          setFailure(explain(error).text);
        }
      }
    })();
  }, []);

  return (
    <>
      {started && relatedUser !== undefined ? (
        <LinkOffer account={relatedUser} verificationId={started.verificationId} finish={finish} />
      ) : (
        <p id="callback-status" class={failure ? 'error' : 'notice'} tabindex={-1} aria-live="polite" ref={status}>
          {failure ?? phrases.callback.finishing}
        </p>
      )}
      <p class="footer">
        <a href="/sign-in">{phrases.callback.backToSignIn}</a>
      </p>
    </>
  );
}

/** An account already has the external identity's email: link the identity to it, or make a new account. */
function LinkOffer({
  account,
  verificationId,
  finish,
}: {
  account: string;
  verificationId: string;
  finish: () => Promise<void>;
}) {
  const form = useForm();
  const offer = phrases.callback.linkOffer(account);
  return (
    <Form
      id="link-form"
      form={form}
      labelledBy="title"
      submit={{ label: phrases.callback.link, busy: phrases.callback.linking, focus: true }}
      onSubmit={async () => {
        await api.identify(verificationId, true);
        await finish();
      }}
      actions={
        <Action class="secondary" onClick={() => void form.run(() => registerInstead(verificationId, finish))}>
          {phrases.callback.newAccount}
        </Action>
      }
    >
      <p>
        {offer.before}
        <strong data-related>{offer.account}</strong>
        {offer.after}
      </p>
    </Form>
  );
}
