import { phrases } from './phrases.ts';
import { Field } from './ui.tsx';

type Input = { value: string; onInput: (value: string) => void };

/** A username to choose, with its rule as the hint: registering, or completing an account at sign-in. */
export function NewUsernameField(props: Input & { id: string; label: string; focus?: boolean }) {
  return (
    <Field
      {...props}
      hint={phrases.register.usernameHint}
      name="username"
      autocomplete="username"
      maxLength={128}
      verbatim
    />
  );
}

/** A new password with the policy's hint, and its confirmation. */
export function NewPasswordFields({
  ids,
  labels,
  focus,
  password,
  confirm,
}: {
  ids: { password: string; confirm: string };
  labels: { password: string; confirm: string };
  focus?: boolean;
  password: Input;
  confirm: Input;
}) {
  return (
    <>
      <Field
        id={ids.password}
        label={labels.password}
        hint={phrases.register.passwordHint}
        type="password"
        name="password"
        autocomplete="new-password"
        focus={focus}
        {...password}
      />
      <Field
        id={ids.confirm}
        label={labels.confirm}
        type="password"
        name="confirm"
        autocomplete="new-password"
        {...confirm}
      />
    </>
  );
}
