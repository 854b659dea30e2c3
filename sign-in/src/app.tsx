import type { FunctionComponent } from 'preact';
import { useState } from 'preact/hooks';

import { Brand, Legal } from './brand.tsx';
import { Captcha } from './captcha.tsx';
import { CompleteProfile } from './complete-profile.tsx';
import { finish, type Step } from './flow.ts';
import { CallbackPage } from './pages/callback.tsx';
import { ConsentPage } from './pages/consent.tsx';
import type { PageProps } from './pages/page.ts';
import { RegisterPage } from './pages/register.tsx';
import { ResetPasswordPage } from './pages/reset-password.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { phrases } from './phrases.ts';
import { SecondFactor } from './second-factor.tsx';

export const pages: Record<keyof typeof phrases.titles, FunctionComponent<PageProps>> = {
  'sign-in': SignInPage,
  register: RegisterPage,
  'reset-password': ResetPasswordPage,
  callback: CallbackPage,
  consent: ConsentPage,
};

export type PageName = keyof typeof pages;

/**
 * One hosted page in its card. A page's `finish` may find that the account owes a second factor, or
 * lacks what the sign-up settings require: the card then turns to that step, under the same title,
 * and the step finishes again (which may turn to the next step).
 */
export function App({ page }: { page: PageName }) {
  const [step, setStep] = useState<Step>();
  const next = async () => {
    const following = await finish();
    if (following) {
      setStep(following);
    }
  };
  const Page = pages[page];
  return (
    <main class="card">
      <Brand showName={page !== 'consent'} registering={page === 'register'} />
      <h1 id="title" tabindex={-1}>
        {phrases.titles[page]}
      </h1>
      {step?.kind === 'profile' ? (
        // Keyed by what is missing: a step that asks for something else starts afresh, focus included.
        <CompleteProfile key={step.missing.join()} step={step} finish={next} />
      ) : step ? (
        <SecondFactor key={step.kind} step={step} finish={next} />
      ) : (
        <Page finish={next} />
      )}
      {!step && (page === 'sign-in' || page === 'register' || page === 'reset-password') && <Captcha />}
      <Legal />
    </main>
  );
}
