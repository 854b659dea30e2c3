import { useState } from 'preact/hooks';

import { api } from '../api.ts';
import { requiredNewPassword } from '../checks.ts';
import { phrases } from '../phrases.ts';
import { Field, Form, useFocusOnMount, useForm } from '../ui.tsx';
import { useVerificationCode, VerificationCode } from '../verification-code.tsx';

/** Forgot the password: prove the account's email with a code, then choose a new password. */
export function ResetPasswordPage() {
  const [step, setStep] = useState<'code' | 'password' | 'done'>('code');
  const emailCode = useVerificationCode();
  if (step === 'done') {
    return <Done />;
  }
  return (
    <>
      {step === 'code' ? (
        <VerificationCode
          id="reset"
          event="ForgotPassword"
          state={emailCode}
          texts={phrases.resetCode}
          labelledBy="title"
          onVerified={async (verificationId) => {
            await api.identify(verificationId);
            setStep('password');
          }}
        />
      ) : (
        <NewPassword onSaved={() => setStep('done')} />
      )}
      <p class="footer">
        <a href="/sign-in">{phrases.resetPassword.backToSignIn}</a>
      </p>
    </>
  );
}

function NewPassword({ onSaved }: { onSaved: () => void }) {
  const form = useForm();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  return (
    <Form
      id="reset-password-form"
      form={form}
      labelledBy="title"
      submit={{ label: phrases.resetPassword.submit, busy: phrases.resetPassword.submitting }}
      fieldFor={() => 'reset-new-password'}
      onSubmit={async () => {
        const secret = requiredNewPassword(
          { field: 'reset-new-password', value: password },
          { field: 'reset-confirm-password', value: confirm },
        );
        await api.newPassword(secret);
        await api.submit();
        onSaved();
      }}
    >
      <Field
        id="reset-new-password"
        label={phrases.resetPassword.password}
        hint={phrases.resetPassword.passwordHint}
        type="password"
        name="password"
        autocomplete="new-password"
        focus
        value={password}
        onInput={setPassword}
      />
      <Field
        id="reset-confirm-password"
        label={phrases.resetPassword.confirm}
        type="password"
        name="confirm"
        autocomplete="new-password"
        value={confirm}
        onInput={setConfirm}
      />
    </Form>
  );
}

function Done() {
  const message = useFocusOnMount<HTMLParagraphElement>(true);
  return (
    <section id="reset-done" aria-labelledby="title">
      <p class="success" id="reset-done-message" tabindex={-1} ref={message}>
        {phrases.resetPassword.done}
      </p>
      <a class="button primary" href="/sign-in">
        {phrases.resetPassword.backToSignIn}
      </a>
    </section>
  );
}
