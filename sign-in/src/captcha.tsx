import { useEffect, useRef } from 'preact/hooks';

import type { PublicSettings } from './api.ts';
import { publicSettings } from './branding.ts';

type CaptchaConfig = NonNullable<PublicSettings['captchaConfig']>;

/** The parts of Cloudflare's and Google's widget scripts the page calls. */
type Turnstile = {
  render(element: HTMLElement, options: Record<string, unknown>): string;
  reset(widgetId: string): void;
};
type Recaptcha = {
  ready(callback: () => void): void;
  render(element: HTMLElement, options: Record<string, unknown>): number;
  reset(widgetId: number): void;
  execute(siteKey: string, options: { action: string }): Promise<string>;
};
declare global {
  interface Window {
    turnstile?: Turnstile;
    grecaptcha?: { enterprise: Recaptcha };
  }
}

/**
 * How the page gets a token for `PUT /api/experience`: the widget's answer, or for reCAPTCHA's
 * invisible mode a fresh assessment token asked at that moment. A token is spent by one start, so
 * each is taken once and the widget is reset for the next attempt.
 */
let nextToken: () => Promise<string | undefined> = () => Promise.resolve(undefined);

/** The token for the next start, if the captcha policy is on and the widget has one. */
export const captchaToken = () => nextToken();

function loadScript(src: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.async = true;
    script.addEventListener('load', () => resolve());
    script.addEventListener('error', () => reject(new Error(`${src} did not load`)));
    document.head.append(script);
  });
}

async function mountTurnstile(element: HTMLElement, { siteKey }: CaptchaConfig): Promise<void> {
  await loadScript('https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit');
  const turnstile = window.turnstile;
  if (!turnstile) {
    return;
  }
  let token: string | undefined;
  const widgetId = turnstile.render(element, {
    sitekey: siteKey,
    callback: (answer: string) => (token = answer),
    'expired-callback': () => (token = undefined),
  });
  nextToken = () => {
    const taken = token;
    token = undefined;
    turnstile.reset(widgetId);
    return Promise.resolve(taken);
  };
}

async function mountRecaptcha(element: HTMLElement, { siteKey, domain, mode }: CaptchaConfig): Promise<void> {
  const render = mode === 'checkbox' ? 'explicit' : encodeURIComponent(siteKey);
  await loadScript(`https://${domain ?? 'www.google.com'}/recaptcha/enterprise.js?render=${render}`);
  const recaptcha = window.grecaptcha?.enterprise;
  if (!recaptcha) {
    return;
  }
  await new Promise<void>((resolve) => recaptcha.ready(resolve));
  if (mode !== 'checkbox') {
    // The service expects this action whatever the event (Logto's).
    nextToken = () => recaptcha.execute(siteKey, { action: 'interaction' });
    return;
  }
  let token: string | undefined;
  const widgetId = recaptcha.render(element, {
    sitekey: siteKey,
    action: 'interaction',
    callback: (answer: string) => (token = answer),
    'expired-callback': () => (token = undefined),
  });
  nextToken = () => {
    const taken = token;
    token = undefined;
    recaptcha.reset(widgetId);
    return Promise.resolve(taken);
  };
}

/**
 * The captcha widget of the provider the public settings name (`captchaConfig`, present while the
 * captcha policy is on), loaded from the provider (the page's CSP allows its origins then). Nothing
 * when the policy is off. A widget that cannot load leaves the page without a token: the service
 * then answers `session.captcha_required`, which the form shows.
 */
export function Captcha() {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    void publicSettings().then(async (settings) => {
      const config = settings?.captchaConfig;
      const element = holder.current;
      if (!config || !element) {
        return;
      }
      await (config.type === 'Turnstile' ? mountTurnstile(element, config) : mountRecaptcha(element, config)).catch(
        () => undefined,
      );
    });
  }, []);
  return <div ref={holder} id="captcha" class="captcha" />;
}
