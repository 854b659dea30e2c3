import type { SignInExperience } from '../../../lib/sign-in-experience/schemas.ts';
import { api } from '../api.ts';
import { t } from '../i18n/index.ts';
import { Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type Settings = Pick<
  SignInExperience,
  'signInMode' | 'signUp' | 'signIn' | 'passwordPolicy' | 'sentinelPolicy' | 'mfa' | 'passkeySignIn'
>;
type Identifier = Settings['signUp']['identifiers'][number];

const identifiers: Identifier[] = ['username', 'email', 'phone'];
/** The choices, in the order offered; each is named by `signInExperience.<list>.<value>`. */
const signInModes: Array<Settings['signInMode']> = ['SignInAndRegister', 'SignIn', 'Register'];
/** The second factors the service implements, in Logto's order. */
const mfaFactors = ['Totp', 'WebAuthn', 'EmailVerificationCode', 'PhoneVerificationCode', 'BackupCode'] as const;
/** Logto's `passkeySignIn` switches. */
const passkeySignInOptions: Array<keyof Settings['passkeySignIn']> = ['enabled', 'showPasskeyButton', 'allowAutofill'];
const mfaPolicies = ['UserControlled', 'Mandatory', 'NoPrompt'] as const;

/** Identifiers, password policy, lockout, MFA policy and passkey sign-in: GET/PATCH /api/sign-in-exp. */
export function SignInExperiencePage() {
  const settings = useLoad<Settings>('sign-in-exp');
  const action = useAction();
  const save = (event: Event, current: Settings) => {
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const values = formValues(event);
    const signUpIdentifiers = form.getAll('signUpIdentifiers').map(String) as Identifier[];
    const signInIdentifiers = form.getAll('signInIdentifiers').map(String) as Identifier[];
    const body: Record<string, unknown> = {
      signInMode: values.signInMode,
      signUp: { ...current.signUp, identifiers: signUpIdentifiers },
      signIn: {
        methods: signInIdentifiers.map(
          (identifier) =>
            current.signIn.methods.find((method) => method.identifier === identifier) ?? {
              identifier,
              password: true,
              verificationCode: identifier !== 'username',
              isPasswordPrimary: true,
            },
        ),
      },
      passwordPolicy: {
        ...current.passwordPolicy,
        length: { min: Number(values.minLength), max: current.passwordPolicy.length.max },
        characterTypes: { min: Number(values.characterTypes) },
      },
    };
    body.sentinelPolicy = { maxAttempts: Number(values.maxAttempts), lockoutDuration: Number(values.lockoutDuration) };
    body.mfa = { factors: form.getAll('mfaFactors').map(String), policy: values.mfaPolicy };
    const passkeySignIn = form.getAll('passkeySignIn').map(String);
    body.passkeySignIn = Object.fromEntries(passkeySignInOptions.map((name) => [name, passkeySignIn.includes(name)]));
    void action.run(async () => {
      await api('PATCH', 'sign-in-exp', body);
      settings.reload();
    });
  };
  return (
    <>
      <h1>{t('nav.signInExperience')}</h1>
      <Loaded state={settings}>
        {(current) => (
          <form class="card" onSubmit={(event) => save(event, current)} aria-label={t('nav.signInExperience')}>
            <Field label={t('signInExperience.mode')} name="signInMode">
              {(id) => (
                <select id={id} name="signInMode">
                  {signInModes.map((mode) => (
                    <option value={mode} selected={mode === current.signInMode}>
                      {t(`signInExperience.modes.${mode}`)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <fieldset>
              <legend>{t('signInExperience.signUpIdentifiers')}</legend>
              {identifiers.map((identifier) => (
                <label key={identifier} class="check">
                  <input
                    type="checkbox"
                    name="signUpIdentifiers"
                    value={identifier}
                    defaultChecked={current.signUp.identifiers.includes(identifier)}
                  />{' '}
                  {t(`signInExperience.identifiers.${identifier}`)}
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>{t('signInExperience.signInIdentifiers')}</legend>
              {identifiers.map((identifier) => (
                <label key={identifier} class="check">
                  <input
                    type="checkbox"
                    name="signInIdentifiers"
                    value={identifier}
                    defaultChecked={current.signIn.methods.some((method) => method.identifier === identifier)}
                  />{' '}
                  {t(`signInExperience.identifiers.${identifier}`)}
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>{t('signInExperience.passwordPolicy')}</legend>
              <Field
                label={t('signInExperience.minLength')}
                name="minLength"
                type="number"
                min={1}
                max={256}
                defaultValue={String(current.passwordPolicy.length.min)}
              />
              <Field
                label={t('signInExperience.characterTypes')}
                name="characterTypes"
                type="number"
                min={1}
                max={4}
                defaultValue={String(current.passwordPolicy.characterTypes.min)}
              />
            </fieldset>
            <fieldset>
              <legend>{t('signInExperience.lockout')}</legend>
              <Field
                label={t('signInExperience.maxAttempts')}
                name="maxAttempts"
                type="number"
                min={1}
                max={1000}
                defaultValue={String(current.sentinelPolicy.maxAttempts)}
              />
              <Field
                label={t('signInExperience.lockoutDuration')}
                name="lockoutDuration"
                type="number"
                min={1}
                max={10080}
                defaultValue={String(current.sentinelPolicy.lockoutDuration)}
              />
            </fieldset>
            <fieldset>
              <legend>{t('signInExperience.mfa')}</legend>
              {mfaFactors.map((factor) => (
                <label key={factor} class="check">
                  <input
                    type="checkbox"
                    name="mfaFactors"
                    value={factor}
                    defaultChecked={current.mfa.factors.includes(factor)}
                  />{' '}
                  {t(`signInExperience.factors.${factor}`)}
                </label>
              ))}
              <small class="hint">{t('signInExperience.codeFactorHint')}</small>
              <Field label={t('signInExperience.mfaPolicy')} name="mfaPolicy">
                {(id) => (
                  <select id={id} name="mfaPolicy">
                    {mfaPolicies.map((policy) => (
                      <option value={policy} selected={policy === current.mfa.policy}>
                        {t(`signInExperience.policies.${policy}`)}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            </fieldset>
            <fieldset>
              <legend>{t('signInExperience.passkeySignIn')}</legend>
              {passkeySignInOptions.map((name) => (
                <label key={name} class="check">
                  <input
                    type="checkbox"
                    name="passkeySignIn"
                    value={name}
                    defaultChecked={current.passkeySignIn[name]}
                  />{' '}
                  {t(`signInExperience.passkeyOptions.${name}`)}
                </label>
              ))}
              <small class="hint">{t('signInExperience.passkeyHint')}</small>
            </fieldset>
            <FormError error={action.error} />
            <button class="primary" disabled={action.busy}>
              {t('common.save')}
            </button>
            {action.done && <span role="status"> {t('common.saved')}</span>}
          </form>
        )}
      </Loaded>
    </>
  );
}
