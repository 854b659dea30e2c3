import { useState } from 'preact/hooks';

import { api, type InteractionEvent } from './api.ts';
import { requiredCode, requiredEmail, sixDigits } from './checks.ts';
import { phrases, type EmailCodePhrases } from './phrases.ts';
import { Action, Field, Form, useForm } from './ui.tsx';

/** Where an email-code step is: the address typed, and once sent, the code's verification. */
export type EmailCodeState = ReturnType<typeof useEmailCode>;

/** Kept by the page, so that the step survives the page showing something else for a while. */
export function useEmailCode() {
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [sent, setSent] = useState<{ email: string; verificationId: string; again: boolean }>();
  return { email, setEmail, code, setCode, sent, setSent };
}

type Props = {
  /** Prefix of the forms' and inputs' ids. */
  id: string;
  event: InteractionEvent;
  state: EmailCodeState;
  texts: EmailCodePhrases;
  labelledBy?: string;
  /** What follows a verified code: the verification identifies the user. */
  onVerified: (verificationId: string) => Promise<void>;
};

/**
 * Proves an email address with a 6-digit code (a code sign-in, a password reset): one form sends
 * the code, the next checks it, or sends a new one, or goes back for another address.
 */
export function EmailCode({ id, event, state, texts, labelledBy, onVerified }: Props) {
  const sendForm = useForm();
  const verifyForm = useForm();
  const { sent } = state;
  const emailId = `${id}-email`;
  const codeId = `${id}-code`;

  const send = async (email: string, again: boolean) => {
    const { verificationId } = await api.sendCode(email, event);
    state.setSent({ email, verificationId, again });
    state.setCode('');
  };

  if (!sent) {
    return (
      <Form
        key="send"
        id={`${id}-send-form`}
        form={sendForm}
        labelledBy={labelledBy}
        submit={{ label: phrases.emailCode.send, busy: phrases.emailCode.sending }}
        fieldFor={() => emailId}
        onSubmit={async () => {
          const email = requiredEmail(emailId, state.email);
          await api.start(event);
          await send(email, false);
        }}
      >
        <p class="hint">{texts.intro}</p>
        <Field
          id={emailId}
          label={phrases.emailCode.email}
          type="email"
          name="email"
          autocomplete="email"
          verbatim
          focus
          value={state.email}
          onInput={state.setEmail}
        />
      </Form>
    );
  }

  return (
    <Form
      key="verify"
      id={`${id}-verify-form`}
      form={verifyForm}
      labelledBy={labelledBy}
      submit={{ label: texts.verify, busy: texts.verifying }}
      fieldFor={() => codeId}
      onSubmit={async () => {
        const code = requiredCode(codeId, state.code, sixDigits, phrases.invalid.emailCode);
        await api.verifyCode(sent.email, sent.verificationId, code);
        await onVerified(sent.verificationId);
      }}
      actions={
        <div class="actions">
          <Action
            class="link"
            onClick={() =>
              void verifyForm.run(async () => {
                await send(sent.email, true);
                document.getElementById(codeId)?.focus();
              })
            }
          >
            {phrases.emailCode.sendAgain}
          </Action>
          <Action
            class="link"
            onClick={() => {
              verifyForm.clear();
              state.setSent(undefined);
            }}
          >
            {phrases.emailCode.otherEmail}
          </Action>
        </div>
      }
    >
      <p class="hint">{sent.again ? texts.sentAgainTo(sent.email) : texts.sentTo(sent.email)}</p>
      <Field
        id={codeId}
        class="code"
        label={phrases.emailCode.code}
        name="code"
        inputMode="numeric"
        autocomplete="one-time-code"
        maxLength={6}
        focus
        value={state.code}
        onInput={state.setCode}
      />
    </Form>
  );
}
