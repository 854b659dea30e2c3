import { useRef, useState } from 'preact/hooks';

import { api, type CodeChannel } from './api.ts';
import { required, requiredNewPassword } from './checks.ts';
import { NewPasswordFields, NewUsernameField } from './credential-fields.tsx';
import { alternativesOf, type ProfileStep } from './flow.ts';
import { phrases } from './phrases.ts';
import { Form, useForm } from './ui.tsx';
import { useVerificationCode, VerificationCode } from './verification-code.tsx';

type Finish = () => Promise<void>;

const nameOf = (field: string) => phrases.profile[field] ?? field;

/**
 * A username and/or a password the account lacks, in one form: each is added to the profile (the
 * API's answer, such as the username rules or the password policy, is said on its input), then the
 * sign-in finishes.
 */
function ChooseCredentials({
  username: asksUsername,
  password: asksPassword,
  finish,
}: {
  username: boolean;
  password: boolean;
  finish: Finish;
}) {
  const form = useForm();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  // The input the request under way is about: an answer refusing it is said there.
  const about = useRef<string | undefined>(undefined);
  return (
    <Form
      id="profile-form"
      form={form}
      labelledBy="profile-title"
      describedBy="profile-intro"
      submit={{ label: phrases.completeProfile.submit, busy: phrases.completeProfile.submitting }}
      fieldFor={() => about.current}
      onSubmit={async () => {
        const name = asksUsername ? required('profile-username', username, phrases.invalid.username) : undefined;
        const secret = asksPassword
          ? requiredNewPassword(
              { field: 'profile-password', value: password },
              { field: 'profile-confirm-password', value: confirm },
            )
          : undefined;
        if (name !== undefined) {
          about.current = 'profile-username';
          await api.addProfile({ type: 'username', value: name });
        }
        if (secret !== undefined) {
          about.current = 'profile-password';
          await api.addProfile({ type: 'password', value: secret });
        }
        // The submit is about no one input.
        about.current = undefined;
        await finish();
      }}
    >
      {asksUsername && (
        <NewUsernameField
          id="profile-username"
          label={phrases.completeProfile.username}
          focus
          value={username}
          onInput={setUsername}
        />
      )}
      {asksPassword && (
        <NewPasswordFields
          ids={{ password: 'profile-password', confirm: 'profile-confirm-password' }}
          labels={{ password: phrases.completeProfile.password, confirm: phrases.completeProfile.confirm }}
          focus={!asksUsername}
          password={{ value: password, onInput: setPassword }}
          confirm={{ value: confirm, onInput: setConfirm }}
        />
      )}
    </Form>
  );
}

/** An email or phone the account lacks: a code proves it, it is added to the profile, and the sign-in finishes. */
function ProveAddress({ channel, finish }: { channel: CodeChannel; finish: Finish }) {
  const state = useVerificationCode();
  return (
    <VerificationCode
      id="profile"
      channel={channel}
      // The pages meet this step only at a sign-in's submit (a registration starts complete).
      event="SignIn"
      restart={false}
      state={state}
      texts={phrases.completeProfile[channel]}
      labelledBy="profile-title"
      describedBy="profile-intro"
      onVerified={async (verificationId) => {
        await api.addProfile({ type: channel, verificationId });
        await finish();
      }}
    />
  );
}

/**
 * What the sign-up settings require and the account lacks (`user.missing_profile` at submit), as
 * Logto's "continue" step asks for it. A username and a password are asked together; an email or
 * a phone is proved first, and the submit then names what is still missing. Where the settings
 * take one of several (`emailOrPhone`), the others are offered as links.
 */
export function CompleteProfile({ step, finish }: { step: ProfileStep; finish: Finish }) {
  const identifiers = alternativesOf(step.missing.find((item) => item !== 'password') ?? '').filter(Boolean);
  const [choice, setChoice] = useState(identifiers[0]);
  const needsPassword = step.missing.includes('password');
  const needs = step.missing.map((item) => phrases.completeProfile.either(alternativesOf(item).map(nameOf)));
  return (
    <section id="profile-step" aria-labelledby="profile-title">
      <h2 id="profile-title">{phrases.completeProfile.title}</h2>
      <p class="hint" id="profile-intro">
        {phrases.completeProfile.intro(needs)}
      </p>
      {choice === 'email' || choice === 'phone' ? (
        <ProveAddress key={choice} channel={choice} finish={finish} />
      ) : (
        <ChooseCredentials username={choice === 'username'} password={needsPassword} finish={finish} />
      )}
      {identifiers.length > 1 && (
        <div class="actions">
          {identifiers
            .filter((other) => other !== choice)
            .map((other) => (
              <button key={other} type="button" class="link" onClick={() => setChoice(other)}>
                {phrases.completeProfile.useInstead(nameOf(other))}
              </button>
            ))}
        </div>
      )}
    </section>
  );
}
