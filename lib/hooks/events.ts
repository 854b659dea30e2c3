import type { EventName } from '../shared/event-data.ts';

/**
 * The webhook event catalogue: the 27 events of the specification, in its three groups. The
 * management route → event map lives with the routes (lib/management/route-events.ts); this file
 * only says which events exist.
 */
export const hookEventGroups = {
  /** A user's own actions in the sign-in experience. */
  interaction: ['PostRegister', 'PostSignIn', 'PostResetPassword'],
  /** Changes of data, through the management API or the experience. */
  data: [
    'User.Created',
    'User.Deleted',
    'User.Data.Updated',
    'User.SuspensionStatus.Updated',
    'Role.Created',
    'Role.Deleted',
    'Role.Data.Updated',
    'Role.Scopes.Updated',
    'Scope.Created',
    'Scope.Deleted',
    'Scope.Data.Updated',
    'Organization.Created',
    'Organization.Deleted',
    'Organization.Data.Updated',
    'Organization.Membership.Updated',
    'OrganizationRole.Created',
    'OrganizationRole.Deleted',
    'OrganizationRole.Data.Updated',
    'OrganizationRole.Scopes.Updated',
    'OrganizationScope.Created',
    'OrganizationScope.Deleted',
    'OrganizationScope.Data.Updated',
  ],
  /** Security exceptions. */
  exception: ['Identifier.Lockout', 'Message.RateLimited'],
} as const;

export type HookEventGroup = keyof typeof hookEventGroups;

export const hookEvents = [
  ...hookEventGroups.interaction,
  ...hookEventGroups.data,
  ...hookEventGroups.exception,
] as const;

export type HookEvent = (typeof hookEvents)[number];

/**
 * Logto's events of features this service does not have: adaptive MFA
 * (`PostSignInAdaptiveMfaTriggered`), an application's limit of grants (`Grant.LimitExceeded`) and
 * trusted devices (`TrustedDevice.*`). A hook may list them, as in Logto, so that hooks made for
 * Logto are taken as they are; nothing here emits them, because what causes them never happens.
 */
export const logtoOnlyHookEvents = [
  'PostSignInAdaptiveMfaTriggered',
  'TrustedDevice.Created',
  'TrustedDevice.Deleted',
  'Grant.LimitExceeded',
] as const;

/** What a hook may subscribe to: the catalogue, and Logto's events that never occur here. */
export const subscribableHookEvents = [...hookEvents, ...logtoOnlyHookEvents] as const;

export type InteractionHookEvent = (typeof hookEventGroups.interaction)[number];
export type DataHookEvent = (typeof hookEventGroups.data)[number];
export type ExceptionHookEvent = (typeof hookEventGroups.exception)[number];

const known = new Set<string>(hookEvents);

export const isHookEvent = (value: string): value is HookEvent => known.has(value);

export function hookEventGroup(event: HookEvent): HookEventGroup {
  for (const [group, events] of Object.entries(hookEventGroups) as Array<[HookEventGroup, readonly string[]]>) {
    if (events.includes(event)) {
      return group;
    }
  }
  throw new Error(`unknown hook event ${event}`);
}

/** The payload data of each event (lib/shared/event-data.ts) is declared for exactly these 27. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const payloadTypesCoverCatalogue: Same<HookEvent, EventName> = true;
