/**
 * Operation ids of the OpenAPI document, named as Logto names them, so that a client generated from
 * our document calls the same functions as one generated from Logto's (`@logto/api`'s `ListUsers`,
 * `GetUser`, `AssignUserRoles`…).
 *
 * The rule is Logto's: a verb from the method (`get` on a collection is `List`), then each path
 * segment in PascalCase, a segment naming one item (followed by a parameter) in the singular, and
 * the last segment of a `post` too. `exceptions` holds the names Logto gives otherwise, and the names
 * of the Experience and Account APIs, which Logto writes by hand.
 */

const verbs = { get: 'Get', post: 'Create', put: 'Replace', patch: 'Update', delete: 'Delete' } as const;
export type OperationMethod = keyof typeof verbs;

/** `method path` in route notation (`/users/:userId`) → Logto's name, where the rule does not give it. */
const exceptions: Readonly<Record<string, string>> = {
  // Management API: Logto's own exceptions
  'get /status': 'GetStatus',
  'get /swagger.json': 'GetSwaggerJson',
  'get /.well-known/sign-in-exp': 'GetSignInExperienceConfig',
  'get /sign-in-exp': 'GetSignInExp',
  'get /sign-in-exp/username-policy/case-sensitivity-conflicts': 'GetUsernameCaseSensitivityConflicts',
  'get /captcha-provider': 'GetCaptchaProvider',
  'put /captcha-provider': 'UpdateCaptchaProvider',
  'get /configs/oidc/:keyType': 'GetOidcKeys',
  'post /configs/oidc/:keyType/rotate': 'RotateOidcKeys',
  'delete /configs/oidc/:keyType/:keyId': 'DeleteOidcKey',
  'post /applications/:applicationId/roles': 'AssignApplicationRoles',
  'post /one-time-tokens': 'AddOneTimeTokens',
  'post /one-time-tokens/verify': 'VerifyOneTimeToken',
  'post /users/:userId/roles': 'AssignUserRoles',
  'post /users/:userId/password/verify': 'VerifyUserPassword',
  'get /users/:userId/has-password': 'GetUserHasPassword',
  'patch /users/:userId/personal-access-tokens': 'UpdatePersonalAccessTokenName',
  'get /account-center': 'GetAccountCenterSettings',
  'patch /account-center': 'UpdateAccountCenterSettings',
  'post /users/:userId/personal-access-tokens/delete': 'DeletePersonalAccessTokenPost',
  'post /organizations/:id/users': 'AddOrganizationUsers',
  'post /organizations/:id/users/roles': 'AssignOrganizationRolesToUsers',
  'post /organizations/:id/users/:userId/roles': 'AssignOrganizationRolesToUser',
  'post /organizations/:id/applications': 'AddOrganizationApplications',
  'post /organizations/:id/applications/roles': 'AssignOrganizationRolesToApplications',
  'post /organizations/:id/applications/:applicationId/roles': 'AssignOrganizationRolesToApplication',
  'post /sentinel-activities/delete': 'DeleteSentinelActivities',
  'post /verification-codes/verify': 'VerifyVerificationCode',
  // Experience API (Logto's names)
  'put /experience': 'InitInteraction',
  'put /experience/interaction-event': 'UpdateInteractionEvent',
  'get /experience/interaction': 'GetInteraction',
  'post /experience/preflight/sign-in-passkey/authentication': 'CreateSignInPasskeyAuthentication',
  'post /experience/verification/sign-in-passkey/authentication': 'CreateSignInPasskeyAuthenticationWithIdentifier',
  'post /experience/verification/sign-in-passkey/authentication/verify': 'VerifySignInPasskeyAuthentication',
  'post /experience/identification': 'IdentifyUser',
  'post /experience/submit': 'SubmitInteraction',
  'post /experience/profile': 'AddUserProfile',
  'put /experience/profile/password': 'ResetUserPassword',
  'post /experience/profile/mfa': 'BindMfaVerification',
  'post /experience/profile/mfa/mfa-skipped': 'SkipMfaBindingFlow',
  'post /experience/profile/mfa/mfa-enabled': 'MarkMfaEnabled',
  'post /experience/profile/mfa/mfa-suggestion-skipped': 'SkipMfaSuggestion',
  'get /experience/sso-connectors': 'GetEnabledSsoConnectors',
  'post /experience/verification/password': 'CreatePasswordVerification',
  'post /experience/verification/new-password-identity': 'CreateNewPasswordIdentityVerification',
  'post /experience/verification/verification-code': 'CreateAndSendVerificationCode',
  'post /experience/verification/verification-code/verify': 'VerifyVerificationCodeVerification',
  'post /experience/verification/mfa-verification-code': 'CreateAndSendMfaVerificationCode',
  'post /experience/verification/mfa-verification-code/verify': 'VerifyMfaVerificationCode',
  'post /experience/verification/social/:connectorId/authorization-uri': 'CreateSocialVerification',
  'post /experience/verification/social/:connectorId/verify': 'VerifySocialVerification',
  'post /experience/verification/sso/:connectorId/authorization-uri': 'CreateEnterpriseSsoVerification',
  'post /experience/verification/sso/:connectorId/verify': 'VerifyEnterpriseSsoVerification',
  'post /experience/verification/totp/secret': 'CreateTotpSecret',
  'post /experience/verification/totp/verify': 'VerifyTotpVerification',
  'post /experience/verification/backup-code/generate': 'GenerateBackupCodes',
  'post /experience/verification/backup-code/verify': 'VerifyBackupCode',
  // Account API and its verifications (Logto's names)
  'get /my-account': 'GetProfile',
  'patch /my-account': 'UpdateProfile',
  'patch /my-account/profile': 'UpdateOtherProfile',
  'get /my-account/mfa-settings': 'GetMfaSettings',
  'patch /my-account/mfa-settings': 'UpdateMfaSettings',
  'get /my-account/logto-configs': 'GetLogtoConfigs',
  'patch /my-account/logto-configs': 'UpdateLogtoConfigs',
  'get /my-account/sessions': 'GetSessions',
  'delete /my-account/sessions/:sessionId': 'DeleteSession',
  'post /my-account/password': 'UpdatePassword',
  'post /my-account/primary-email': 'UpdatePrimaryEmail',
  'delete /my-account/primary-email': 'DeletePrimaryEmail',
  'post /my-account/primary-phone': 'UpdatePrimaryPhone',
  'delete /my-account/primary-phone': 'DeletePrimaryPhone',
  'get /my-account/mfa-verifications': 'GetMfaVerifications',
  'post /my-account/mfa-verifications': 'AddMfaVerification',
  'post /my-account/mfa-verifications/totp-secret/generate': 'GenerateTotpSecret',
  'post /my-account/mfa-verifications/backup-codes/generate': 'GenerateMyAccountBackupCodes',
  'delete /my-account/mfa-verifications/:verificationId': 'DeleteMfaVerification',
  'put /my-account/mfa-verifications/totp': 'ReplaceTotpMfaVerification',
  'post /verifications/password': 'CreateVerificationByPassword',
  'post /verifications/verification-code': 'CreateVerificationByVerificationCode',
  'post /verifications/verification-code/verify': 'VerifyVerificationByVerificationCode',
  // Ours, where the rule reads badly (a single object, an action)
  'get /console/config': 'GetConsoleConfig',
  'get /dashboard': 'GetDashboard',
  'post /hooks/:id/deliveries/:deliveryId/resend': 'ResendHookDelivery',
  'post /email-templates/preview': 'PreviewEmailTemplate',
};

const isParameter = (segment: string | undefined) => segment?.startsWith(':') ?? false;

/** `identities` → `identity`, `roles` → `role`; a word that is not a plural (`status`, `access`) stays. */
const singular = (word: string) =>
  word.endsWith('ies')
    ? `${word.slice(0, -3)}y`
    : word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')
      ? word.slice(0, -1)
      : word;

/** `sign-in-exp` → `SignInExp`, `swagger.json` → `SwaggerJson`. */
const pascal = (segment: string) =>
  segment
    .split(/[-._]/)
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join('');

/** The operation id of `method path` (path in route notation, without `/api`). */
export function operationId(method: OperationMethod, path: string): string {
  const exception = exceptions[`${method} ${path}`];
  if (exception) {
    return exception;
  }
  const segments = path.split('/').filter(Boolean);
  const forOneItem = isParameter(segments.at(-1));
  const nouns = segments.flatMap((segment, index) => {
    if (isParameter(segment)) {
      return [];
    }
    const last = index === segments.length - 1;
    const namesOne = isParameter(segments[index + 1]) || (last && method === 'post');
    return [pascal(namesOne ? singular(segment) : segment)];
  });
  const verb = method === 'get' && !forOneItem ? 'List' : verbs[method];
  return verb + nouns.join('');
}
