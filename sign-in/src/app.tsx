import type { FunctionComponent } from 'preact';
import { useState } from 'preact/hooks';

import { finish, type SecondFactorStep } from './flow.ts';
import { CallbackPage } from './pages/callback.tsx';
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
};

export type PageName = keyof typeof pages;

/**
 * One hosted page in its card. A page's `finish` may find that the account owes a second factor:
 * the card then turns to that step, under the same title, and the step finishes again.
 */
export function App({ page }: { page: PageName }) {
  const [secondFactor, setSecondFactor] = useState<SecondFactorStep>();
  const next = async () => {
    const step = await finish();
    if (step) {
      setSecondFactor(step);
    }
  };
  const Page = pages[page];
  return (
    <main class="card">
      <h1 id="title" tabindex={-1}>
        {phrases.titles[page]}
      </h1>
      {secondFactor ? (
        <SecondFactor key={secondFactor.kind} step={secondFactor} finish={next} />
      ) : (
        <Page finish={next} />
      )}
    </main>
  );
}
