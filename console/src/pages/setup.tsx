import { api } from '../api.ts';
import { Field, FormError, formValues, useAction } from '../ui.tsx';

/** The first run: no administrator exists yet, so whoever opens the console first makes one. */
export function FirstAdministrator({ onCreated }: { onCreated: () => void }) {
  const action = useAction();
  const submit = (event: Event) => {
    const { username, password } = formValues(event);
    void action.run(() => api('POST', 'console/first-administrator', { username, password })).then((done) => done && onCreated());
  };
  return (
    <form onSubmit={submit} class="card">
      <h2>Create the first administrator</h2>
      <p>No administrator exists yet. The account you create here can sign in to this console and manage everything.</p>
      <Field label="Username" name="username" error={action.error} required autocomplete="username" />
      <Field label="Password" name="password" type="password" error={action.error} required autocomplete="new-password" hint="8 characters or more; no runs like abc or 111." />
      <FormError error={action.error} fields={['username', 'password']} />
      <button class="primary" disabled={action.busy}>
        Create administrator
      </button>
    </form>
  );
}
