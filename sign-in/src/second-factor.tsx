import { useState } from 'preact/hooks';

import { api } from './api.ts';
import { requiredCode, sixDigits } from './checks.ts';
import type { SecondFactorStep } from './flow.ts';
import { phrases } from './phrases.ts';
import { Action, Field, Form, useFocusOnMount, useForm } from './ui.tsx';

type Props<Kind extends SecondFactorStep['kind']> = {
  step: Extract<SecondFactorStep, { kind: Kind }>;
  finish: () => Promise<void>;
};

const backupCode = /^[0-9a-f]{10}$/i;

/** Proves a second factor: a code of the authenticator app, or a backup code. */
function Verify({ step, finish }: Props<'verify'>) {
  const form = useForm();
  const [useBackupCode, setUseBackupCode] = useState(!step.factors.includes('Totp'));
  const [code, setCode] = useState('');
  return (
    <section id="mfa-verify" aria-labelledby="mfa-verify-title">
      <h2 id="mfa-verify-title" tabindex={-1}>
        {phrases.mfa.verifyTitle}
      </h2>
      <Form
        id="mfa-verify-form"
        form={form}
        submit={{ label: phrases.mfa.verify, busy: phrases.mfa.verifying }}
        fieldFor={() => 'mfa-code'}
        onSubmit={async () => {
          if (useBackupCode) {
            await api.verifyBackupCode(requiredCode('mfa-code', code, backupCode, phrases.invalid.backupCode));
          } else {
            await api.verifyTotp(requiredCode('mfa-code', code, sixDigits, phrases.invalid.appCode));
          }
          await finish();
        }}
        actions={
          step.factors.includes('Totp') &&
          step.factors.includes('BackupCode') && (
            <Action
              class="link"
              onClick={() => {
                setUseBackupCode(!useBackupCode);
                setCode('');
                form.clear();
                document.getElementById('mfa-code')?.focus();
              }}
            >
              {useBackupCode ? phrases.mfa.useApp : phrases.mfa.useBackupCode}
            </Action>
          )
        }
      >
        <Field
          id="mfa-code"
          label={useBackupCode ? phrases.mfa.backupCode : phrases.mfa.appCode}
          name="code"
          inputMode={useBackupCode ? 'text' : 'numeric'}
          autocomplete="one-time-code"
          maxLength={11}
          focus
          value={code}
          onInput={setCode}
        />
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

/** The step a sign-in, a registration or an external sign-in turns to when the account owes a second factor. */
export function SecondFactor({ step, finish }: { step: SecondFactorStep; finish: () => Promise<void> }) {
  switch (step.kind) {
    case 'verify':
      return <Verify step={step} finish={finish} />;
    case 'enrol':
      return <Enrol step={step} finish={finish} />;
    case 'backup':
      return <Backup step={step} finish={finish} />;
  }
}
