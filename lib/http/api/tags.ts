/**
 * The OpenAPI document's tags, one per domain, with what each groups, in the order a reader meets
 * them. A route's `tag` is one of them (`RouteSpec` says so to the compiler).
 */
export const apiTags = {
  Status: 'Health and this document. No token needed.',
  'Sign-in experience':
    'The sign-in experience settings: sign-up and sign-in methods, password and lockout policies, MFA.',
  'Captcha provider':
    "The captcha (Cloudflare Turnstile or reCAPTCHA Enterprise) the sign-in experience's captcha policy asks for.",
  Console: "The admin console's configuration and first run. No token needed.",
  Experience:
    "The end user's sign-in, registration and password reset (Logto's Experience API), on the interaction cookie.",
  'Experience MFA': 'Second factors during sign-in: TOTP, backup codes, email and phone codes.',
  Account: "The signed-in user's own profile and verifications (Logto's Account API), on the user's access token.",
  'Account MFA': "The signed-in user's own second factors.",
  'Account center':
    'Whether the Account API is open to users, and which of their fields it shows and lets them change.',
  Applications: 'OIDC clients: machine-to-machine, traditional web, single-page and native applications.',
  Resources: 'API resources and their permission scopes.',
  Roles: 'Roles, their scopes, and the users and applications holding them.',
  Configs: "The provider's signing and cookie keys, and their rotation.",
  Organizations: 'Organizations (multi-tenancy).',
  'Organization members': "An organization's users and their organization roles.",
  'Organization applications': "An organization's machine-to-machine applications and their organization roles.",
  'Organization JIT': 'Just-in-time membership: email domains, default roles and SSO connectors.',
  'Organization scopes': 'The permission scopes of the organization template.',
  'Organization roles': 'The roles of the organization template, with organization and resource scopes.',
  'Organization invitations': 'Invitations to join an organization.',
  Users: 'Users: profile, custom data, password, suspension, organizations.',
  'User identities': "A user's social and enterprise SSO identities.",
  'User MFA': "A user's second factors, as administrators see them.",
  Connectors: 'Email, SMS and social connectors.',
  'Email templates': 'What the email connector sends for each purpose and language, instead of the built-in emails.',
  'Custom phrases':
    'Texts of the hosted sign-in pages and built-in emails, per language, in place of the shipped ones.',
  'SSO connectors': 'Enterprise single sign-on connectors (OIDC, SAML).',
  Sentinel: 'Identifier lockout: unlocking identifiers.',
  'Verification codes': 'Verification codes sent and checked by the management API.',
  'One-time tokens': 'Magic links and invitations: tokens that sign a person in by email once, before they expire.',
  Development: 'Development-only helpers, absent in production mode.',
  'Audit logs': 'The audit log of sign-ins, management changes and token grants.',
  'Token exchange': 'Subject tokens for impersonation (RFC 8693 token exchange).',
  'Trusted issuers':
    'Outside issuers whose JWTs our applications may exchange (RFC 8693) or present as grants (RFC 7523).',
  Hooks: 'Webhooks: their configuration, test sends, delivery logs and re-sends.',
  Dashboard: 'User counts for the admin console.',
} as const satisfies Record<string, string>;

export type ApiTag = keyof typeof apiTags;
