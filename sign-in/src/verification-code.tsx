import { useState } from 'preact/hooks';

import { api, type CodeChannel, type InteractionEvent } from './api.ts';
import { captchaToken } from './captcha.tsx';
import { requiredCode, requiredEmail, requiredPhone, sixDigits } from './checks.ts';
import { type CodePhrases, phrases } from './phrases.ts';
import { Action, Field, Form, useForm } from './ui.tsx';

/** Where a code step is: the address typed, and once sent, the code's verification. */
export type VerificationCodeState = ReturnType<typeof useVerificationCode>;

/** Kept by the page, so that the step survives the page showing something else for a while. */
export function useVerificationCode() {
  const [address, setAddress] = useState('');
  const [code, setCode] = useState('');
  const [sent, setSent] = useState<{ address: string; verificationId: string; again: boolean }>();
  return { address, setAddress, code, setCode, sent, setSent };
}

type Props = {
  /** Prefix of the forms' and inputs' ids. */
  id: string;
  /** Where the code goes: an email address (the default) or a phone number. */
  channel?: CodeChannel;
  event: InteractionEvent;
  /** Sending the first code starts the interaction `event` anew (a code sign-in, a reset); without it, the code joins the interaction under way. */
  restart?: boolean;
  state: VerificationCodeState;
  texts: CodePhrases;
  labelledBy?: string;
  describedBy?: string;
  /** What follows a verified code: the verification identifies the user, or fills the profile. */
  onVerified: (verificationId: string) => Promise<void>;
};

/**
 * Proves an email address or a phone number with a 6-digit code (a code sign-in, a password reset,
 * an address the account lacks): one form sends the code, the next checks it, or sends a new one,
 * or goes back for another address.
 */
export function VerificationCode({
  id,
  channel = 'email',
  event,
  restart = true,
  state,
  texts,
  labelledBy,
  describedBy,
  onVerified,
}: Props) {
  const sendForm = useForm();
  const verifyForm = useForm();
  const { sent } = state;
  const addressId = `${id}-${channel}`;
  const codeId = `${id}-code`;
  const words = phrases.code[channel];

  const send = async (address: string, again: boolean) => {
    const { verificationId } = await api.sendCode({ type: channel, value: address }, event);
    state.setSent({ address, verificationId, again });
    state.setCode('');
  };

  if (!sent) {
    return (
      <Form
        key="send"
        id={`${id}-send-form`}
        form={sendForm}
        labelledBy={labelledBy}
        describedBy={describedBy}
        submit={{ label: phrases.code.send, busy: phrases.code.sending }}
        fieldFor={() => addressId}
        onSubmit={async () => {
          const address =
            channel === 'email' ? requiredEmail(addressId, state.address) : requiredPhone(addressId, state.address);
          if (restart) {
            await api.start(event, await captchaToken());
          }
          await send(address, false);
        }}
      >
        <p class="hint">{texts.intro}</p>
        <Field
          id={addressId}
          label={words.label}
          type={channel === 'email' ? 'email' : 'tel'}
          name={channel}
          autocomplete={channel === 'email' ? 'email' : 'tel'}
          verbatim
          focus
          value={state.address}
          onInput={state.setAddress}
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
      describedBy={describedBy}
      submit={{ label: texts.verify, busy: texts.verifying }}
      fieldFor={() => codeId}
      onSubmit={async () => {
        const code = requiredCode(codeId, state.code, sixDigits, words.invalidCode);
        await api.verifyCode({ type: channel, value: sent.address }, sent.verificationId, code);
        await onVerified(sent.verificationId);
      }}
      actions={
        <div class="actions">
          <Action
            class="link"
            onClick={() =>
              void verifyForm.run(async () => {
                await send(sent.address, true);
                document.getElementById(codeId)?.focus();
              })
            }
          >
            {phrases.code.sendAgain}
          </Action>
          <Action
            class="link"
            onClick={() => {
              verifyForm.clear();
              state.setSent(undefined);
            }}
          >
            {words.other}
          </Action>
        </div>
      }
    >
      <p class="hint">{sent.again ? texts.sentAgainTo(sent.address) : texts.sentTo(sent.address)}</p>
      <Field
        id={codeId}
        class="code"
        label={phrases.code.code}
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
