import { orNotFound, RequestError } from '../http/errors.ts';
import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { findApplication } from './queries.ts';
import { type Application, type ApplicationType, confidentialTypes, type CustomClientMetadata } from './schemas.ts';

export type NewApplication = {
  id?: string;
  secret?: string;
  name: string;
  type: ApplicationType;
  description?: string | null;
  oidcClientMetadata?: Application['oidcClientMetadata'];
  customClientMetadata?: CustomClientMetadata;
  customData?: Record<string, unknown>;
  isThirdParty?: boolean;
};

/**
 * Public clients cannot keep a secret, so they may not swap tokens on a user's behalf (RFC 8693 §2.1);
 * third-party applications act only with the user's consent, which token exchange never asks (Logto).
 */
export function assertSettingsFitType(
  application: { type: ApplicationType; isThirdParty: boolean },
  custom: CustomClientMetadata,
): void {
  // Logto's rule: a third party signs people in with their consent; a machine has no one to ask.
  if (application.isThirdParty && application.type === 'MachineToMachine') {
    throw new RequestError('application.invalid_third_party_application_type');
  }
  if (custom.allowTokenExchange && application.isThirdParty) {
    throw new RequestError('application.third_party_application_cannot_enable_token_exchange');
  }
  if (custom.allowTokenExchange && !confidentialTypes.has(application.type)) {
    throw new RequestError('application.token_exchange_not_allowed_for_public_client');
  }
  // Logto's rule: the device authorization grant (RFC 8628) is for native applications only.
  if (custom.isDeviceFlow && application.type !== 'Native') {
    throw new RequestError('application.device_flow_native_only');
  }
}

/** Logto's rule: an application is a device-flow one, or not, from its creation on. */
export function assertDeviceFlowUnchanged(before: CustomClientMetadata, after: CustomClientMetadata): void {
  if (Boolean(before.isDeviceFlow) !== Boolean(after.isDeviceFlow)) {
    throw new RequestError('application.device_flow_not_changeable');
  }
}

/**
 * A new application. Its legacy `secret` is the one given (the bootstrap admin's), or none: then the
 * row holds an internal one that is never shown, and a confidential application gets Logto's named
 * "Default secret" instead (`createApplication`).
 */
export function buildApplication(input: NewApplication): Application {
  const customClientMetadata = input.customClientMetadata ?? {};
  assertSettingsFitType({ type: input.type, isThirdParty: input.isThirdParty ?? false }, customClientMetadata);
  return {
    tenantId,
    id: input.id ?? generateId(),
    name: input.name,
    ...(input.secret !== undefined && { secret: input.secret }),
    description: input.description ?? null,
    type: input.type,
    oidcClientMetadata: input.oidcClientMetadata ?? { redirectUris: [], postLogoutRedirectUris: [] },
    customClientMetadata,
    protectedAppMetadata: null,
    customData: input.customData ?? {},
    isThirdParty: input.isThirdParty ?? false,
    appLevelAccessControlEnabled: false,
    createdAt: Date.now(),
  };
}

/** The application of this id; 404 `entity.not_exists_with_id` when there is none. */
export const getApplication = async (db: Queryable, id: string): Promise<Application> =>
  orNotFound(await findApplication(db, id), 'application', id);
