import type { Kind, ListName } from '../kind.ts';
import { applications, applicationSecrets } from './applications.ts';
import { captchaProviders } from './captcha-providers.ts';
import { socialConnectors, ssoConnectors } from './connectors.ts';
import { applicationConsentScopes } from './consent-scopes.ts';
import { customPhrases } from './custom-phrases.ts';
import { emailTemplates } from './email-templates.ts';
import { hooks } from './hooks.ts';
import { organizationRoles, organizationScopes } from './organization-template.ts';
import { organizations } from './organizations.ts';
import { resources } from './resources.ts';
import { roles } from './roles.ts';
import { trustedIssuers } from './trusted-issuers.ts';

/**
 * Every kind of entry, in the order an import writes them (each after those it refers to) and an
 * export lists them.
 */
export const kinds: { [K in ListName]: Kind<K> }[ListName][] = [
  resources,
  roles,
  applications,
  applicationSecrets,
  organizationScopes,
  organizationRoles,
  applicationConsentScopes,
  ssoConnectors,
  socialConnectors,
  organizations,
  hooks,
  trustedIssuers,
  customPhrases,
  emailTemplates,
  captchaProviders,
];
