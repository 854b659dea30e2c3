import { api, type PublicApplication, type PublicSettings } from './api.ts';

/**
 * The sign-in experience's colours and custom CSS: a stylesheet the service builds from the settings,
 * linked after the pages' own so that it overrides them (the CSP allows no inline style).
 */
export function linkBrandingStylesheet(): void {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = '/sign-in-branding.css';
  document.head.append(link);
}

/** Read once per page: the settings, and the application (none outside a sign-in, e.g. an expired one). */
let settings: Promise<PublicSettings | undefined> | undefined;
let application: Promise<PublicApplication | undefined> | undefined;

export const publicSettings = () => (settings ??= api.settings().catch(() => undefined));
export const signInApplication = () => (application ??= api.application().catch(() => undefined));
