import { api } from '../api.ts';
import { t } from '../i18n/index.ts';
import { Field, FormError, formValues, useAction } from '../ui.tsx';

/**
 * The first run: no administrator exists yet, so the first one is made here. From this machine
 * that is enough; from another, the service asks for the setup token it printed at start. Once
 * created, the person is signed in with what they typed (`onCreated`).
 */
export function FirstAdministrator({
  needsSetupToken,
  onCreated,
}: {
  needsSetupToken: boolean;
  onCreated: (administrator: { username: string; password: string }) => void;
}) {
  const action = useAction();
  const submit = (event: Event) => {
    const { username, password, setupToken } = formValues(event);
    void action
      .run(() => api('POST', 'console/first-administrator', { username, password, setupToken }))
      .then((done) => done && onCreated({ username: username ?? '', password: password ?? '' }));
  };
  return (
    <form onSubmit={submit} class="card">
      <h2>{t('setup.heading')}</h2>
      <p>{t('setup.intro')}</p>
      {needsSetupToken && (
        <Field
          label={t('setup.setupToken')}
          name="setupToken"
          error={action.error}
          required
          autocomplete="off"
          hint={t('setup.setupTokenHint')}
        />
      )}
      <Field label={t('common.username')} name="username" error={action.error} required autocomplete="username" />
      <Field
        label={t('common.password')}
        name="password"
        type="password"
        error={action.error}
        required
        autocomplete="new-password"
        hint={t('setup.passwordHint')}
      />
      <FormError error={action.error} fields={['setupToken', 'username', 'password']} />
      <button class="primary" disabled={action.busy}>
        {t('setup.create')}
      </button>
    </form>
  );
}
