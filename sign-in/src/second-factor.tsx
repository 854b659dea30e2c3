import { useState } from 'preact/hooks';

import { api, type CodeChannel, type MfaFactor } from './api.ts';
import { requiredCode, sixDigits } from './checks.ts';
import type { SecondFactorStep } from './flow.ts';
import { PasskeyEnrol, passkeyPhrases, PasskeyVerify } from './passkey.tsx';
import { phrases } from './phrases.ts';
import { Action, Field, Form, useFocusOnMount, useForm } from './ui.tsx';

type Props<Kind extends SecondFactorStep['kind']> = {
  step: Extract<SecondFactorStep, { kind: Kind }>;
  finish: () => Promise<void>;
};

const backupCode = /^[0-9a-f]{10}$/i;

const channelOf = (factor: MfaFactor): CodeChannel | undefined =>
  factor === 'EmailVerificationCode' ? 'email' : factor === 'PhoneVerificationCode' ? 'phone' : undefined;

/**
 * Proves a second factor: a code of the authenticator app, a code sent to the account's email or
 * phone (shown masked; sent only when asked for), or a backup code. The other factors the account
 * has are offered as links.
 */
function Verify({ step, finish }: Props<'verify'>) {
  const form = useForm();
  const [factor, setFactor] = useState<MfaFactor>(step.factors[0] ?? 'Totp');
  const [code, setCode] = useState('');
  const [sentId, setSentId] = useState<string>();
  const channel = channelOf(factor);
  const to = (other: MfaFactor) =>
    step.masked[other] ?? (channelOf(other) === 'email' ? phrases.mfa.yourEmail : phrases.mfa.yourPhone);
  const switchLabel = (other: MfaFactor) =>
    other === 'WebAuthn'
      ? passkeyPhrases.use
      : other === 'Totp'
        ? phrases.mfa.useApp
        : other === 'BackupCode'
          ? phrases.mfa.useBackupCode
          : phrases.mfa.sendCodeInstead(to(other));
  const use = (other: MfaFactor) => {
    setFactor(other);
    setSentId(undefined);
    setCode('');
    // The form is keyed by method and phase: it mounts anew, and its first control takes the focus.
    form.clear();
  };
  const send = async (target: CodeChannel) => {
    const { verificationId } = await api.sendMfaCode(target);
    setSentId(verificationId);
    setCode('');
  };
  const waitingToSend = channel !== undefined && sentId === undefined;
  const others = step.factors.filter((other) => other !== factor);
  if (factor === 'WebAuthn') {
    return (
      <PasskeyVerify
        finish={finish}
        actions={
          <div class="actions">
            {others.map((other) => (
              <Action key={other} class="link" onClick={() => use(other)}>
                {switchLabel(other)}
              </Action>
            ))}
          </div>
        }
      />
    );
  }
  return (
    <section id="mfa-verify" aria-labelledby="mfa-verify-title">
      <h2 id="mfa-verify-title" tabindex={-1}>
        {phrases.mfa.verifyTitle}
      </h2>
      <Form
        key={`${factor}-${waitingToSend ? 'send' : 'verify'}`}
        id="mfa-verify-form"
        form={form}
        submit={
          waitingToSend
            ? { label: phrases.mfa.sendCodeTo(to(factor)), busy: phrases.mfa.sending, focus: true }
            : { label: phrases.mfa.verify, busy: phrases.mfa.verifying }
        }
        fieldFor={() => (waitingToSend ? undefined : 'mfa-code')}
        onSubmit={async () => {
          if (channel && sentId === undefined) {
            await send(channel);
            return;
          }
          if (channel && sentId !== undefined) {
            await api.verifyMfaCode(
              channel,
              sentId,
              requiredCode('mfa-code', code, sixDigits, phrases.invalid.sentCode),
            );
          } else if (factor === 'BackupCode') {
            await api.verifyBackupCode(requiredCode('mfa-code', code, backupCode, phrases.invalid.backupCode));
          } else {
            await api.verifyTotp(requiredCode('mfa-code', code, sixDigits, phrases.invalid.appCode));
          }
          await finish();
        }}
        actions={
          <div class="actions">
            {channel && sentId !== undefined && (
              <Action
                class="link"
                onClick={() =>
                  void form.run(async () => {
                    await send(channel);
                    document.getElementById('mfa-code')?.focus();
                  })
                }
              >
                {phrases.mfa.sendAgain}
              </Action>
            )}
            {step.factors
              .filter((other) => other !== factor)
              .map((other) => (
                <Action key={other} class="link" onClick={() => use(other)}>
                  {switchLabel(other)}
                </Action>
              ))}
          </div>
        }
      >
        {channel && sentId !== undefined && <p class="hint">{phrases.mfa.sentTo(to(factor))}</p>}
        {!waitingToSend && (
          <Field
            id="mfa-code"
            label={
              channel ? phrases.mfa.sentCode : factor === 'BackupCode' ? phrases.mfa.backupCode : phrases.mfa.appCode
            }
            name="code"
            inputMode={factor === 'BackupCode' ? 'text' : 'numeric'}
            autocomplete="one-time-code"
            maxLength={factor === 'BackupCode' ? 11 : 6}
            focus
            value={code}
            onInput={setCode}
          />
        )}
      </Form>
    </section>
  );
}

/** Sets up an authenticator app: its secret as a QR code and as text, then a code it shows. */
function Enrol({ step, finish }: Props<'enrol'>) {
  const form = useForm();
  const [code, setCode] = useState('');
  return (
    <section id="mfa-enrol" aria-labelledby="mfa-enrol-title">
      <h2 id="mfa-enrol-title" tabindex={-1}>
        {phrases.mfa.enrolTitle}
      </h2>
      <p class="hint">{phrases.mfa.enrolIntro}</p>
      <img class="qr" src={step.qrCode} alt={phrases.mfa.qrCode} width={200} height={200} />
      <p class="hint">
        {phrases.mfa.key}
        <code data-secret>{step.secret}</code>
      </p>
      <Form
        id="mfa-enrol-form"
        form={form}
        submit={{ label: phrases.mfa.turnOn, busy: phrases.mfa.turningOn }}
        fieldFor={() => 'mfa-enrol-code'}
        onSubmit={async () => {
          await api.verifyTotp(
            requiredCode('mfa-enrol-code', code, sixDigits, phrases.invalid.appCode),
            step.verificationId,
          );
          await api.addMfa('Totp', step.verificationId);
          await finish();
        }}
        actions={
          step.skippable && (
            <Action
              class="secondary"
              onClick={() =>
                void form.run(async () => {
                  await api.skipMfa();
                  await finish();
                })
              }
            >
              {phrases.mfa.notNow}
            </Action>
          )
        }
      >
        <Field
          id="mfa-enrol-code"
          label={phrases.mfa.enrolCode}
          name="code"
          inputMode="numeric"
          autocomplete="one-time-code"
          maxLength={6}
          focus
          value={code}
          onInput={setCode}
        />
      </Form>
    </section>
  );
}

/** Shows the new backup codes once; saving them finishes. */
function Backup({ step, finish }: Props<'backup'>) {
  const form = useForm();
  const title = useFocusOnMount<HTMLHeadingElement>(true);
  return (
    <section id="mfa-backup" aria-labelledby="mfa-backup-title">
      <h2 id="mfa-backup-title" tabindex={-1} ref={title}>
        {phrases.mfa.backupTitle}
      </h2>
      <p class="hint">{phrases.mfa.backupIntro}</p>
      <ul class="codes" data-codes>
        {step.codes.map((code) => (
          <li key={code}>{code}</li>
        ))}
      </ul>
      <Form
        id="mfa-backup-form"
        form={form}
        submit={{ label: phrases.mfa.saved, busy: phrases.mfa.saving }}
        onSubmit={async () => {
          await api.addMfa('BackupCode', step.verificationId);
          await finish();
        }}
      />
    </section>
  );
}

/** A passkey to set up, or (when offered) an authenticator app instead. */
function Passkey({ step, finish }: Props<'passkey'>) {
  const [app, setApp] = useState<Extract<SecondFactorStep, { kind: 'enrol' }>>();
  if (app) {
    return <Enrol step={app} finish={finish} />;
  }
  const useApp = async () => {
    const { verificationId, secret, secretQrCode } = await api.totpSecret();
    setApp({ kind: 'enrol', verificationId, secret, qrCode: secretQrCode, skippable: step.skippable });
  };
  return <PasskeyEnrol skippable={step.skippable} finish={finish} useApp={step.totp ? useApp : undefined} />;
}

/** The step a sign-in, a registration or an external sign-in turns to when the account owes a second factor. */
export function SecondFactor({ step, finish }: { step: SecondFactorStep; finish: () => Promise<void> }) {
  switch (step.kind) {
    case 'verify':
      return <Verify step={step} finish={finish} />;
    case 'enrol':
      return <Enrol step={step} finish={finish} />;
    case 'backup':
      return <Backup step={step} finish={finish} />;
    case 'passkey':
      return <Passkey step={step} finish={finish} />;
  }
}
