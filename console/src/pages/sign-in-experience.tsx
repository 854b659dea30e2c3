import { api } from '../api.ts';
import { Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type Identifier = 'username' | 'email' | 'phone';
type Settings = {
  signInMode: 'SignIn' | 'Register' | 'SignInAndRegister';
  signUp: { identifiers: Identifier[]; password: boolean; verify: boolean };
  signIn: {
    methods: Array<{
      identifier: Identifier;
      password: boolean;
      verificationCode: boolean;
      isPasswordPrimary: boolean;
    }>;
  };
  passwordPolicy: {
    length: { min: number; max: number };
    characterTypes: { min: number };
    rejects: Record<string, unknown>;
  };
  sentinelPolicy: { maxAttempts: number; lockoutDuration: number };
  mfa: { factors: string[]; policy: string };
  passkeySignIn: { enabled: boolean; showPasskeyButton: boolean; allowAutofill: boolean };
};

const identifiers: Identifier[] = ['username', 'email', 'phone'];
const signInModes: Array<[Settings['signInMode'], string]> = [
  ['SignInAndRegister', 'Sign in and register'],
  ['SignIn', 'Sign in only'],
  ['Register', 'Register only'],
];
/** The second factors the service implements, in Logto's order. */
const mfaFactors: Array<[string, string]> = [
  ['Totp', 'Authenticator app (TOTP)'],
  ['WebAuthn', 'Passkey (WebAuthn)'],
  ['EmailVerificationCode', "Code sent to the user's email"],
  ['PhoneVerificationCode', "Code sent to the user's phone"],
  ['BackupCode', 'Backup codes (beside another factor)'],
];
/** Logto's `passkeySignIn` switches. */
const passkeySignInOptions: Array<[keyof Settings['passkeySignIn'], string]> = [
  ['enabled', 'Users may sign in with a passkey alone (no password)'],
  ['showPasskeyButton', 'Show a "Sign in with a passkey" button'],
  ['allowAutofill', "Offer passkeys in the username field's autofill"],
];
const mfaPolicies: Array<[string, string]> = [
  ['UserControlled', 'Users choose whether to set up MFA'],
  ['Mandatory', 'Every user must set up MFA'],
  ['NoPrompt', 'Never ask for MFA'],
];

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
    body.passkeySignIn = Object.fromEntries(passkeySignInOptions.map(([name]) => [name, passkeySignIn.includes(name)]));
    void action.run(async () => {
      await api('PATCH', 'sign-in-exp', body);
      settings.reload();
    });
  };
  return (
    <>
      <h1>Sign-in experience</h1>
      <Loaded state={settings}>
        {(current) => (
          <form class="card" onSubmit={(event) => save(event, current)} aria-label="Sign-in experience">
            <Field label="Who may come in" name="signInMode">
              {(id) => (
                <select id={id} name="signInMode">
                  {signInModes.map(([mode, label]) => (
                    <option value={mode} selected={mode === current.signInMode}>
                      {label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <fieldset>
              <legend>Sign-up identifiers</legend>
              {identifiers.map((identifier) => (
                <label key={identifier} class="check">
                  <input
                    type="checkbox"
                    name="signUpIdentifiers"
                    value={identifier}
                    defaultChecked={current.signUp.identifiers.includes(identifier)}
                  />{' '}
                  {identifier}
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>Sign-in identifiers</legend>
              {identifiers.map((identifier) => (
                <label key={identifier} class="check">
                  <input
                    type="checkbox"
                    name="signInIdentifiers"
                    value={identifier}
                    defaultChecked={current.signIn.methods.some((method) => method.identifier === identifier)}
                  />{' '}
                  {identifier}
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>Password policy</legend>
              <Field
                label="Minimum length"
                name="minLength"
                type="number"
                min={1}
                max={256}
                defaultValue={String(current.passwordPolicy.length.min)}
              />
              <Field
                label="Character types required (of lower, upper, digit, symbol)"
                name="characterTypes"
                type="number"
                min={1}
                max={4}
                defaultValue={String(current.passwordPolicy.characterTypes.min)}
              />
            </fieldset>
            <fieldset>
              <legend>Lockout</legend>
              <Field
                label="Failed attempts before lockout"
                name="maxAttempts"
                type="number"
                min={1}
                max={1000}
                defaultValue={String(current.sentinelPolicy.maxAttempts)}
              />
              <Field
                label="Lockout duration (minutes)"
                name="lockoutDuration"
                type="number"
                min={1}
                max={10080}
                defaultValue={String(current.sentinelPolicy.lockoutDuration)}
              />
            </fieldset>
            <fieldset>
              <legend>Multi-factor authentication</legend>
              {mfaFactors.map(([factor, label]) => (
                <label key={factor} class="check">
                  <input
                    type="checkbox"
                    name="mfaFactors"
                    value={factor}
                    defaultChecked={current.mfa.factors.includes(factor)}
                  />{' '}
                  {label}
                </label>
              ))}
              <small class="hint">
                An email or phone code is a second factor only where signing in with that code is off.
              </small>
              <Field label="MFA policy" name="mfaPolicy">
                {(id) => (
                  <select id={id} name="mfaPolicy">
                    {mfaPolicies.map(([policy, label]) => (
                      <option value={policy} selected={policy === current.mfa.policy}>
                        {label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            </fieldset>
            <fieldset>
              <legend>Passkey sign-in</legend>
              {passkeySignInOptions.map(([name, label]) => (
                <label key={name} class="check">
                  <input
                    type="checkbox"
                    name="passkeySignIn"
                    value={name}
                    defaultChecked={current.passkeySignIn[name]}
                  />{' '}
                  {label}
                </label>
              ))}
              <small class="hint">People add passkeys as their passkey (WebAuthn) factor, or in their account.</small>
            </fieldset>
            <FormError error={action.error} />
            <button class="primary" disabled={action.busy}>
              Save
            </button>
            {action.done && <span role="status"> Saved.</span>}
          </form>
        )}
      </Loaded>
    </>
  );
}
