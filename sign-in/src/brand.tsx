import { useEffect, useState } from 'preact/hooks';

import type { PublicApplication, PublicSettings } from './api.ts';
import { publicSettings, signInApplication } from './branding.ts';
import { phrases } from './phrases.ts';

function useBranding() {
  const [settings, setSettings] = useState<PublicSettings>();
  const [application, setApplication] = useState<PublicApplication>();
  useEffect(() => {
    void publicSettings().then(setSettings);
    void signInApplication().then(setApplication);
  }, []);
  return { settings, application };
}

/**
 * Above every page: the application's logo when it has one, else the sign-in experience's (its dark
 * logo in dark mode, when dark mode is on), "Sign in to <application>" (on the register page "Create
 * your account for <application>"), and for a client named by a
 * URL, "Sent by <its host>".
 */
export function Brand({ showName, registering }: { showName: boolean; registering: boolean }) {
  const { settings, application } = useBranding();
  const appLogo = application?.branding.logoUrl;
  const logo = appLogo ?? settings?.branding.logoUrl;
  const darkLogo = appLogo ? undefined : settings?.color.isDarkModeEnabled ? settings.branding.darkLogoUrl : undefined;
  if (!logo && !application) {
    return null;
  }
  return (
    <header class="brand">
      {logo && (
        <picture>
          {darkLogo && <source srcSet={darkLogo} media="(prefers-color-scheme: dark)" />}
          <img id="brand-logo" src={logo} alt={application ? phrases.brand.logoOf(application.name) : ''} />
        </picture>
      )}
      {application && showName && (
        <p id="sign-in-to" class="brand-name">
          {registering ? phrases.brand.registerFor(application.name) : phrases.brand.signInTo(application.name)}
        </p>
      )}
      {/* A client named by a URL names itself: its host says who it is, as on the consent page. */}
      {application?.clientIdHost && showName && (
        <p id="sign-in-host" class="brand-host">
          <strong>{phrases.brand.sentBy(application.clientIdHost)}</strong>
        </p>
      )}
    </header>
  );
}

/** Below every page: the sign-in experience's terms of use and privacy policy, when set. */
export function Legal() {
  const { settings } = useBranding();
  const terms = settings?.termsOfUseUrl;
  const privacy = settings?.privacyPolicyUrl;
  if (!terms && !privacy) {
    return null;
  }
  return (
    <nav class="legal" aria-label={phrases.brand.legal}>
      {terms && (
        <a id="terms-link" href={terms} target="_blank" rel="noopener noreferrer">
          {phrases.brand.terms}
        </a>
      )}
      {privacy && (
        <a id="privacy-link" href={privacy} target="_blank" rel="noopener noreferrer">
          {phrases.brand.privacy}
        </a>
      )}
    </nav>
  );
}
