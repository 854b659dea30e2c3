/**
 * Every error code a client of the management, experience and account APIs can meet, with its HTTP
 * status and its message. Logto's codes where Logto has one, so that Logto's clients keep working.
 * `RequestError` (errors.ts) is built from a key of this table only: a misspelt code does not compile.
 *
 * A message is a sentence, or a function of typed params where it names values (an id, a name);
 * `data` and `details`, where given, are what the body's `data` and `details` hold for those params.
 * `reason` marks a code whose message is the sentence the throwing site gives (one code, several
 * situations); `reasonOr` the same with a sentence for the plain case. `alsoStatus` is the one other
 * status a code is answered with, where Logto answers it so.
 */
type Entry = {
  readonly status: number;
  readonly alsoStatus?: number;
  readonly message: string | ((params: never) => string);
  readonly data?: (params: never) => unknown;
  readonly details?: (params: never) => unknown;
};

const reason = ({ reason: sentence }: { reason: string }) => sentence;
const reasonOr = (plain: string) => (params?: { reason: string }) => params?.reason ?? plain;

type EntityAndId = { entity: string; id: string };
const entityData = ({ entity, id }: EntityAndId) => ({ name: entity, id });

export const errorCodes = {
  // Anything not in this table: the client learns only that it failed, and the log id to report.
  unknown: { status: 500, message: 'Internal server error.' },

  // The database is gone (a network outage, a restart, a Galera node out of the cluster): retry later.
  'database.unavailable': {
    status: 503,
    message: 'The service cannot reach its database. Please try again shortly.',
  },

  'request.malformed': { status: 400, message: 'The request is not valid HTTP.' },
  'request.not_found': { status: 404, message: 'No API route has this path.' },
  'request.method_not_allowed': { status: 405, message: 'This method is not allowed on this path.' },
  'request.timeout': { status: 408, message: 'The request took too long to arrive.' },
  'request.entity_too_large': { status: 413, message: reason },
  'request.unsupported_media_type': {
    status: 415,
    message: reasonOr('The request body must be JSON (content-type: application/json).'),
  },
  'request.header_fields_too_large': { status: 431, message: 'The request headers are larger than 16 KB.' },
  'request.cross_site_forbidden': {
    status: 403,
    message: 'This request came from another site: it is accepted only from the pages of this service.',
  },
  /** Logto's invitation rules: 422, and 400 for an `expiresAt` not in the future; the rule broken is the body's `details`. */
  'request.invalid_input': {
    status: 422,
    alsoStatus: 400,
    message: ({ details }: { details: string }) => `Input is invalid. ${details}`,
    details: ({ details }: { details: string }) => details,
  },
  'connector.email_connector.bulk_deletion_no_filter': {
    status: 422,
    message: 'Give `languageTag`, `templateType` or both: deleting every email template at once is not offered.',
  },
  'request.message_rate_limited': {
    status: 429,
    message: 'Too many messages sent to this recipient. Please try again later.',
  },
  'request.feature_not_supported': { status: 501, message: reason },

  'guard.invalid_input': { status: 400, message: reason },

  'auth.authorization_header_missing': { status: 401, message: 'Authorization header is missing.' },
  'auth.authorization_token_type_not_supported': { status: 401, message: 'Authorization type is not supported.' },
  // 400 where Logto's Account API answers a scope the token lacks so.
  'auth.unauthorized': { status: 401, alsoStatus: 400, message: reason },
  'auth.forbidden': { status: 403, message: reason },
  'auth.third_party_application_forbidden': {
    status: 403,
    message: "A third-party application's token reads the account; it cannot change it.",
  },
  'auth.too_many_attempts': {
    status: 429,
    message: 'Too many failed authentications from this address; try again later.',
  },

  'entity.not_exists_with_id': {
    status: 404,
    message: ({ entity, id }: EntityAndId) => `The ${entity} with ID \`${id}\` does not exist.`,
    data: entityData,
  },
  'entity.unique_integrity_violation': { status: 422, message: reasonOr('The entity already exists or is in use.') },
  'entity.relation_foreign_key_not_found': {
    status: 422,
    message: (params?: EntityAndId) =>
      params ? `The ${params.entity} with ID \`${params.id}\` does not exist.` : 'A related entity does not exist.',
    data: (params?: EntityAndId) => params && entityData(params),
  },
  'entity.db_constraint_violated': { status: 422, message: reason },
  'entity.not_found': { status: 404, message: reason },
  'entity.invalid_input': { status: 422, message: 'Invalid input. Update list must not be empty.' },

  // Logto's codes: clients match on them.
  'account_center.not_enabled': { status: 400, message: 'The account center is not enabled.' },
  'account_center.field_not_enabled': {
    status: 400,
    message: ({ field }: { field: string }) => `The field ${field} is not enabled in the account center.`,
    data: ({ field }: { field: string }) => ({ field }),
  },
  'account_center.field_not_editable': {
    status: 400,
    message: ({ field }: { field: string }) => `The field ${field} is not editable in the account center.`,
    data: ({ field }: { field: string }) => ({ field }),
  },

  'application.internal_application_violation': {
    status: 403,
    message: 'The admin console application belongs to the service and cannot be changed or deleted.',
  },
  'application.invalid_type': {
    status: 422,
    message: 'Only machine to machine applications can have associated roles.',
  },
  'application.invalid_role_type': {
    status: 422,
    message: 'Can not assign user type role to machine to machine application.',
  },
  'application.token_exchange_not_allowed_for_public_client': {
    status: 422,
    message: 'Token exchange can only be enabled for confidential applications (MachineToMachine, Traditional).',
  },
  'application.device_flow_native_only': {
    status: 422,
    message: 'Device flow is only available for native applications.',
  },
  'application.device_flow_not_changeable': {
    status: 422,
    message: 'Device flow cannot be changed after application creation.',
  },
  'application.invalid_third_party_application_type': {
    status: 400,
    message: 'Only traditional web, single-page and native applications can be third-party applications.',
  },
  'application.third_party_application_cannot_enable_token_exchange': {
    status: 422,
    message: 'Third-party applications cannot enable token exchange.',
  },
  'application.third_party_application_only': {
    status: 422,
    message: 'The feature is only available for third-party applications.',
  },
  'application.user_consent_scopes_not_found': {
    status: 422,
    message: ({ scopeIds }: { scopeIds: string[] }) => `Invalid user consent scopes: ${scopeIds.join(', ')}.`,
    data: ({ scopeIds }: { scopeIds: string[] }) => ({ scopeIds }),
  },
  'application.secret_name_exists': {
    status: 422,
    message: ({ name }: { name: string }) => `The application already has a secret named ${name}.`,
    data: ({ name }: { name: string }) => ({ name }),
  },
  'application.no_legacy_secret_found': { status: 400, message: 'The application has no legacy secret.' },

  'localization.invalid_translation_structure': { status: 422, message: 'Invalid translation structure.' },
  'localization.cannot_delete_default_language': {
    status: 409,
    message: ({ languageTag }: { languageTag: string }) =>
      `${languageTag} is the sign-in experience's fallback language: its phrases cannot be deleted.`,
  },

  'resource.cannot_delete_management_api': { status: 400, message: 'Cannot delete the management API or its scope.' },
  'resource.cannot_modify_management_api': { status: 400, message: 'Cannot modify the management API or its scope.' },
  'resource.resource_identifier_in_use': {
    status: 422,
    message: ({ indicator }: { indicator: string }) => `The API identifier ${indicator} is already in use.`,
    data: ({ indicator }: { indicator: string }) => ({ indicator }),
  },
  'scope.name_exists': {
    status: 422,
    message: ({ name }: { name: string }) => `The scope name ${name} is already in use.`,
    data: ({ name }: { name: string }) => ({ name }),
  },

  'role.name_in_use': {
    status: 422,
    message: ({ name }: { name: string }) => `This role name ${name} is already in use.`,
    data: ({ name }: { name: string }) => ({ name }),
  },
  'role.internal_role_violation': {
    status: 403,
    message: ({ id }: { id: string }) => `The role \`${id}\` belongs to the service and cannot be changed or deleted.`,
  },
  'role.user_exists': {
    status: 422,
    message: ({ userId }: { userId: string }) => `The user id ${userId} has already been added to this role.`,
    data: ({ userId }: { userId: string }) => ({ userId }),
  },
  'role.application_exists': {
    status: 422,
    message: ({ applicationId }: { applicationId: string }) =>
      `The application id ${applicationId} has already been added to this role.`,
    data: ({ applicationId }: { applicationId: string }) => ({ applicationId }),
  },
  'role.scope_exists': {
    status: 422,
    message: ({ scopeId }: { scopeId: string }) => `The scope id ${scopeId} has already been added to this role.`,
    data: ({ scopeId }: { scopeId: string }) => ({ scopeId }),
  },
  'role.management_api_scopes_not_assignable_to_user_role': {
    status: 400,
    message: 'Cannot assign management API scopes to a user role.',
  },

  'organization.role_names_not_found': {
    status: 422,
    message: ({ names }: { names: string[] }) =>
      `Invalid role names detected: ${names.join(', ')}. Please create these roles first before proceeding.`,
    data: ({ names }: { names: string[] }) => ({ names }),
  },
  'organization.require_membership': {
    status: 422,
    message: ({ kind, id }: { kind: 'user' | 'application'; id: string }) =>
      `The ${kind} \`${id}\` must be a member of the organization to proceed.`,
    data: ({ kind, id }: { kind: 'user' | 'application'; id: string }) => ({ [`${kind}Id`]: id }),
  },

  'user.username_already_in_use': { status: 422, message: 'This username is already in use.' },
  'user.username_too_short': {
    status: 422,
    message: ({ minLength }: { minLength: number }) => `The username must be at least ${minLength} characters long.`,
  },
  'user.username_too_long': {
    status: 422,
    message: ({ maxLength }: { maxLength: number }) => `The username must be at most ${maxLength} characters long.`,
  },
  'user.username_uppercase_not_allowed': { status: 422, message: 'The username may not hold uppercase letters.' },
  'user.username_lowercase_not_allowed': { status: 422, message: 'The username may not hold lowercase letters.' },
  'user.username_numbers_not_allowed': { status: 422, message: 'The username may not hold digits.' },
  'user.username_underscore_not_allowed': { status: 422, message: 'The username may not hold underscores.' },
  'user.email_already_in_use': { status: 422, message: 'This email is associated with an existing account.' },
  'user.phone_already_in_use': { status: 422, message: 'This phone number is associated with an existing account.' },
  'user.identity_already_in_use': { status: 422, message: 'This identity is linked to another account already.' },
  'user.personal_access_token_name_exists': { status: 422, message: 'Personal access token name already exists.' },
  'user.username_exists_in_profile': { status: 422, message: 'This account already has a username.' },
  'user.email_exists_in_profile': { status: 422, message: 'This account already has an email address.' },
  'user.phone_exists_in_profile': { status: 422, message: 'This account already has a phone number.' },
  'user.password_exists_in_profile': { status: 422, message: 'This account already has a password.' },
  'user.identity_not_exist': { status: 404, message: reason },
  'user.last_sign_in_method_required': {
    status: 400,
    message: 'This is the last way to sign in to the account; add another before removing it.',
  },
  'user.user_not_exist': {
    status: 404,
    message: ({ identifier }: { identifier: string }) => `User with ${identifier} does not exist.`,
    data: ({ identifier }: { identifier: string }) => ({ identifier }),
  },
  'user.suspended': { status: 401, message: 'This account is suspended.' },
  'user.invalid_role_type': {
    status: 422,
    message: 'Invalid role type: a machine-to-machine role cannot be assigned to a user.',
  },
  'user.sign_in_method_not_enabled': { status: 422, message: 'This sign-in method is not enabled.' },
  'user.missing_profile': { status: 422, message: 'You need to provide additional info before signing-in.' },
  'user.new_password_required_in_profile': { status: 422, message: 'You need to set a new password.' },
  'user.same_password': { status: 422, message: 'New password cannot be the same as your old password.' },
  'user.missing_mfa': { status: 422, message: 'Set up two-step verification to continue.' },
  'user.suggest_mfa': { status: 422, message: 'Set up two-step verification, or skip it for now.' },
  'user.totp_already_in_use': { status: 422, message: 'This account already has an authenticator app.' },
  'user.backup_code_already_in_use': { status: 422, message: 'This account already has backup codes.' },
  'user.totp_secret_invalid': { status: 422, message: 'Invalid TOTP secret supplied.' },
  'user.wrong_backup_code_format': { status: 422, message: 'Backup code format is invalid.' },
  'user.webauthn_already_in_use': { status: 422, message: 'This passkey is already registered.' },

  'password.rejected': { status: 422, message: 'The password does not meet the password policy.' },
  'password.expired': {
    status: 422,
    message: 'The password has expired: set a new one through a password reset.',
  },
  'password.invalid_legacy_password_format': { status: 400, message: 'Invalid legacy password format.' },
  'password.unsupported_legacy_hash_algorithm': {
    status: 400,
    message: ({ algorithm }: { algorithm: string }) => `Unsupported legacy hash algorithm: ${algorithm}.`,
    data: ({ algorithm }: { algorithm: string }) => ({ algorithm }),
  },
  'user.password_and_digest': {
    status: 400,
    message: 'You cannot set both plain text password and password digest.',
  },
  'user.password_algorithm_required': { status: 400, message: 'Password algorithm is required.' },

  'session.not_found': { status: 400, message: 'Session not found. Please go back and sign in again.' },
  'session.interaction_not_found': {
    status: 404,
    message: 'Interaction session not found. Please go back and start the session again.',
  },
  'session.identifier_not_found': {
    status: 404,
    message: reasonOr('User identifier not found. Please go back and sign in again.'),
  },
  'session.invalid_credentials': {
    status: 422,
    message: reasonOr('Incorrect account or password. Please check your input.'),
  },
  'session.invalid_interaction_type': { status: 400, message: reason },
  /** Logto: 422 where a reset identifies the user, 400 where it would change or leave the flow. */
  'session.not_supported_for_forgot_password': {
    status: 422,
    alsoStatus: 400,
    message: reasonOr('This operation is not supported for forgot password.'),
  },
  'session.sso_enabled': { status: 422, message: 'This email signs in with single sign-on.' },
  'session.captcha_required': { status: 422, message: 'Captcha is required.' },
  'session.captcha_failed': { status: 422, message: reasonOr('Captcha verification failed.') },
  'session.verification_failed': { status: 400, message: reasonOr('The verification was not completed.') },
  'session.verification_session_not_found': {
    status: 404,
    message: 'The verification was not found. Restart the verification and try again.',
  },
  'session.verification_blocked_too_many_attempts': {
    status: 400,
    message: 'Too many failed attempts. Sign-in is locked for a while; try again later.',
  },
  'session.mfa.require_mfa_verification': { status: 403, message: 'Verify with your second factor to continue.' },
  'session.mfa.backup_code_required': {
    status: 422,
    message: 'Save your backup codes to finish setting up two-step verification.',
  },
  'session.mfa.invalid_totp_code': { status: 400, message: 'The authenticator code is not valid.' },
  'session.mfa.invalid_backup_code': { status: 400, message: 'The backup code is not valid.' },
  'session.mfa.webauthn_verification_failed': { status: 400, message: 'The passkey could not be verified.' },
  'session.mfa.mfa_factor_not_enabled': { status: 400, message: reason },
  'session.mfa.suggest_additional_mfa': {
    status: 422,
    message: 'Add another two-step verification method, or skip it for now.',
  },
  'session.mfa.backup_code_can_not_be_alone': {
    status: 422,
    message: 'Backup codes cannot be the only two-step verification method.',
  },
  'session.mfa.mfa_policy_not_user_controlled': { status: 422, message: 'Two-step verification cannot be skipped.' },

  'verification_code.not_found': {
    status: 400,
    message: 'Verification code not found. Please send a verification code first.',
  },
  'verification_code.expired': {
    status: 400,
    message: 'Verification code has expired. Please send a new verification code.',
  },
  'verification_code.exceed_max_try': {
    status: 400,
    message: 'Verification code retries limitation exceeded. Please send a new verification code.',
  },
  'verification_code.code_mismatch': { status: 400, message: 'Invalid verification code.' },
  'verification_code.email_mismatch': { status: 400, message: 'This verification is for another email address.' },
  'verification_code.phone_mismatch': { status: 400, message: 'This verification is for another phone number.' },

  'verification_record.not_found': { status: 404, message: 'Verification record not found.' },
  'verification_record.permission_denied': {
    status: 401,
    message: reasonOr('Permission denied, please re-authenticate.'),
  },

  'connector.invalid_config': { status: 400, message: reasonOr('The connector configuration is invalid.') },
  'connector.should_specify_target': { status: 400, message: 'A generic connector needs `metadata.target`.' },
  'connector.can_not_modify_target': { status: 400, message: 'The target of a connector cannot change.' },
  'connector.multiple_target_with_same_platform': {
    status: 422,
    message: ({ target }: { target: string }) => `A connector with target \`${target}\` (or this id) already exists.`,
  },
  'connector.invalid_configuration': { status: 400, message: reason },
  'connector.authorization_failed': { status: 400, message: reason },
  'connector.not_found': {
    status: 501,
    message: ({ channel }: { channel: 'email' | 'SMS' }) =>
      `No ${channel} connector is set up: this service cannot send messages by ${channel}.`,
  },
  'connector.general': { status: 502, message: 'The message could not be sent. Please try again later.' },

  'sign_in_experiences.email_verification_code_cannot_be_used_for_mfa': {
    status: 400,
    message: 'Email codes cannot be a second factor while signing in with an email code is enabled.',
  },
  'sign_in_experiences.phone_verification_code_cannot_be_used_for_mfa': {
    status: 400,
    message: 'SMS codes cannot be a second factor while signing in with an SMS code is enabled.',
  },
  'sign_in_experiences.email_verification_code_cannot_be_used_for_sign_in': {
    status: 400,
    message: 'Signing in with an email code cannot be enabled while email codes are a second factor.',
  },
  'sign_in_experiences.phone_verification_code_cannot_be_used_for_sign_in': {
    status: 400,
    message: 'Signing in with an SMS code cannot be enabled while SMS codes are a second factor.',
  },

  'sign_in_experiences.password_expiration_not_enabled': {
    status: 400,
    message: 'The password expiration policy is off: turn it on in the sign-in experience before expiring passwords.',
  },
  'sign_in_experiences.password_expiration_requires_forgot_password': {
    status: 400,
    message: 'Password expiration needs a forgot-password method, so that people can set a new password.',
  },
  'sign_in_experiences.username_policy_case_conflicts_exist': {
    status: 409,
    message: ({ count }: { count: number }) =>
      `${count} groups of usernames differ only by case; rename them before usernames stop differing by case (GET /api/sign-in-exp/username-policy/case-sensitivity-conflicts).`,
    data: ({ count }: { count: number }) => ({ totalConflicts: count }),
  },
  'sign_in_experiences.passwordless_requires_verify': {
    status: 400,
    message: 'An email or phone sign-up identifier must be verified.',
  },
  'sign_in_experiences.missing_sign_up_identifiers': {
    status: 400,
    message: 'Secondary sign-up identifiers need a primary one.',
  },
  'sign_in_experiences.duplicated_sign_up_identifiers': {
    status: 400,
    message: 'A sign-up identifier is named twice.',
  },
  'sign_in_experiences.non_adaptive_mfa_requires_skippable_policy': {
    status: 422,
    message: 'A prompt policy that cannot be skipped is for adaptive MFA only.',
  },
  'sign_in_experiences.adaptive_mfa_not_offered': {
    status: 422,
    message: 'Adaptive MFA is not offered by this service: keep adaptiveMfa.enabled false.',
  },

  'session.email_blocklist.email_subaddressing_not_allowed': {
    status: 422,
    message: 'Email addresses with a +tag are not allowed.',
  },
  'session.email_blocklist.email_not_allowed': {
    status: 422,
    message: ({ email }: { email: string }) => `The email address ${email} is not allowed.`,
  },

  'single_sign_on.duplicate_connector_name': {
    status: 409,
    message: ({ name }: { name: string }) => `An SSO connector named \`${name}\` already exists.`,
  },

  'one_time_token.token_not_found': { status: 404, message: 'The one-time token does not exist.' },
  'one_time_token.email_mismatch': { status: 400, message: 'The email does not match the one-time token.' },
  'one_time_token.token_consumed': { status: 400, message: 'The one-time token has been used already.' },
  'one_time_token.token_revoked': { status: 400, message: 'The one-time token has been revoked.' },
  'one_time_token.token_expired': { status: 400, message: 'The one-time token has expired.' },
  'one_time_token.cannot_reactivate_token': { status: 400, message: 'A one-time token cannot be made active again.' },
  'one_time_token.interaction_event_mismatch': {
    status: 400,
    message: 'The one-time token is for another kind of interaction (sign-in, registration or password reset).',
  },

  'hook.invalid_url': { status: 400, message: reason },
  'hook.missing_events': { status: 400, message: 'You need to provide at least one event.' },
  'hook.send_test_payload_failed': {
    status: 422,
    message: ({ error }: { error: string }) => `Failed to send test payload: ${error}`,
  },
  'hook.endpoint_responded_with_error': { status: 422, message: 'Endpoint responded with error.' },
  'hook.disabled': { status: 422, message: 'The hook is disabled: enable it before re-sending.' },
  'hook.job_running': {
    status: 409,
    message: ({ jobId }: { jobId: string }) =>
      `A recover or replay job (${jobId}) is running on this hook: wait for it to end before starting another.`,
    data: ({ jobId }: { jobId: string }) => ({ jobId }),
  },
  'hook.delivery_not_failed': {
    status: 422,
    message: ({ status }: { status: string }) => `Only a failed delivery can be re-sent; this one is ${status}.`,
    data: ({ status }: { status: string }) => ({ status }),
  },

  'oidc.session_not_found': { status: 404, message: 'Session not found.' },
  'oidc.only_previous_key_can_be_deleted': { status: 422, message: 'Only a previous key can be deleted.' },

  'console.setup_token_required': {
    status: 403,
    message:
      'The first administrator can be created from this machine, or from elsewhere with the setup token the service printed at start.',
  },
  'console.setup_token_invalid': {
    status: 403,
    message: 'This setup token is not valid: it is wrong or was used already.',
  },
  'console.administrator_exists': { status: 409, message: 'An administrator exists already: sign in instead.' },
  'console.first_run_closed': {
    status: 403,
    message:
      'An administrator existed already, so the first run is closed: create an administrator with `npm run cli -- create-admin`.',
  },
} as const satisfies Record<string, Entry>;

export type ErrorCode = keyof typeof errorCodes;
