/**
 * What the producer of each webhook event knows of it, by event name: the rest of the payload (the
 * envelope, the request's fields) is added by one builder, lib/hooks/payloads.ts. Vocabulary here,
 * below every domain, because a route's handler declares its events through `Effects` and the route
 * layer (http/) sits below the hooks. lib/hooks/events.ts checks that these are the catalogue's 27.
 */

/** A data event: the entity as the API returns it (for a delete, the deleted entity; left out, a route's answer). */
type DataEvent = { data?: unknown };

/** What a membership change did: the fields of Logto's `Organization.Membership.Updated` event. */
export type MembershipDelta = {
  organizationId: string;
  addedUserIds: string[];
  removedUserIds: string[];
  addedApplicationIds: string[];
  removedApplicationIds: string[];
};

/** An end user's flow: who, in which interaction, through which application. */
type InteractionEvent = {
  interactionEvent: string;
  sessionId?: string;
  userId: string;
  /** The user as the management API shows it. */
  user: unknown;
  applicationId?: string;
};

export type EventData = {
  PostRegister: InteractionEvent;
  PostSignIn: InteractionEvent;
  PostResetPassword: InteractionEvent;
  'User.Created': DataEvent;
  'User.Deleted': DataEvent;
  'User.Data.Updated': DataEvent;
  'User.SuspensionStatus.Updated': DataEvent;
  'Role.Created': DataEvent;
  'Role.Deleted': DataEvent;
  'Role.Data.Updated': DataEvent;
  'Role.Scopes.Updated': DataEvent & { roleId: string };
  'Scope.Created': DataEvent;
  'Scope.Deleted': DataEvent;
  'Scope.Data.Updated': DataEvent;
  'Organization.Created': DataEvent;
  'Organization.Deleted': DataEvent;
  'Organization.Data.Updated': DataEvent;
  'Organization.Membership.Updated': DataEvent & { membership: MembershipDelta };
  'OrganizationRole.Created': DataEvent;
  'OrganizationRole.Deleted': DataEvent;
  'OrganizationRole.Data.Updated': DataEvent;
  'OrganizationRole.Scopes.Updated': DataEvent & { organizationRoleId: string };
  'OrganizationScope.Created': DataEvent;
  'OrganizationScope.Deleted': DataEvent;
  'OrganizationScope.Data.Updated': DataEvent;
  'Identifier.Lockout': { type: string; value: string };
  'Message.RateLimited': { action: 'VerificationCodeSend'; recipient: string };
};

export type EventName = keyof EventData;

/**
 * The one way a change declares its webhook events: `emit` them with their data, in the change's
 * transaction. A management route's handler is given one that takes only the events its line of the
 * endpoint → event table names (lib/management/route-events.ts) and writes them after the handler.
 */
export type Effects = {
  emit<E extends EventName>(event: E, data: EventData[E]): Promise<void>;
};
