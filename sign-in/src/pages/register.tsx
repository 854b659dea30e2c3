import { useState } from 'preact/hooks';

import { api } from '../api.ts';
import { captchaToken } from '../captcha.tsx';
import { Invalid, required, requiredNewPassword } from '../checks.ts';
import { NewPasswordFields, NewUsernameField } from '../credential-fields.tsx';
import { phrases } from '../phrases.ts';
import { Form, useForm } from '../ui.tsx';
import type { PageProps } from './page.ts';

/** Create an account with a username and a password. */
export function RegisterPage({ finish }: PageProps) {
  const form = useForm();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  return (
    <>
      <Form
        id="register-form"
        form={form}
        labelledBy="title"
        submit={{ label: phrases.register.submit, busy: phrases.register.submitting }}
        fieldFor={(error) => (error.field === 'password' ? 'new-password' : 'username')}
        onSubmit={async () => {
          const name = required('username', username, phrases.invalid.username);
          if (!/^[A-Z_a-z]\w{0,127}$/.test(name)) {
            throw new Invalid('username', phrases.invalid.usernameShape);
          }
          const secret = requiredNewPassword(
            { field: 'new-password', value: password },
            { field: 'confirm-password', value: confirm },
          );
          await api.start('Register', await captchaToken());
          const { verificationId } = await api.newPasswordIdentity({ type: 'username', value: name }, secret);
          await api.identify(verificationId);
          await finish();
        }}
      >
        <NewUsernameField
          id="username"
          label={phrases.register.username}
          focus
          value={username}
          onInput={setUsername}
        />
        <NewPasswordFields
          ids={{ password: 'new-password', confirm: 'confirm-password' }}
          labels={{ password: phrases.register.password, confirm: phrases.register.confirm }}
          password={{ value: password, onInput: setPassword }}
          confirm={{ value: confirm, onInput: setConfirm }}
        />
      </Form>
      <p class="footer">
        {phrases.register.haveAccount} <a href="/sign-in">{phrases.register.signIn}</a>
      </p>
    </>
  );
}
