import { api } from '../api.ts';
import { Field, FormError, formValues, useAction } from '../ui.tsx';

/**
 * The first run: no administrator exists yet, so the first one is made here. From this machine
 * that is enough; from another, the service asks for the setup token it printed at start.
 */
export function FirstAdministrator({
  needsSetupToken,
  onCreated,
}: {
  needsSetupToken: boolean;
  onCreated: () => void;
}) {
  const action = useAction();
  const submit = (event: Event) => {
    const { username, password, setupToken } = formValues(event);
    void action
      .run(() => api('POST', 'console/first-administrator', { username, password, setupToken }))
      .then((done) => done && onCreated());
  };
  return (
    <form onSubmit={submit} class="card">
      <h2>Create the first administrator</h2>
      <p>No administrator exists yet. The account you create here can sign in to this console and manage everything.</p>
      {needsSetupToken && (
        <Field
          label="Setup token"
          name="setupToken"
          error={action.error}
          required
          autocomplete="off"
          hint="You are not on the service's own machine: paste the setup token the service printed when it started (or run npm run cli -- create-admin there)."
        />
      )}
      <Field label="Username" name="username" error={action.error} required autocomplete="username" />
      <Field
        label="Password"
        name="password"
        type="password"
        error={action.error}
        required
        autocomplete="new-password"
        hint="8 characters or more; no runs like abc or 111."
      />
      <FormError error={action.error} fields={['setupToken', 'username', 'password']} />
      <button class="primary" disabled={action.busy}>
        Create administrator
      </button>
    </form>
  );
}
