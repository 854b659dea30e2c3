import type { Knex } from 'knex';

import { RequestError } from '../http/errors.ts';
import { addLinks, organizationLinks, removeLinks, replaceLinks } from './links.ts';
import { getOrganizationForUpdate, requireMachineApplications, requireUsers } from './lookups.ts';

/** What a membership change did: the payload of Logto's `Organization.Membership.Updated` event. */
export type MembershipDelta = {
  organizationId: string;
  addedUserIds: string[];
  removedUserIds: string[];
  addedApplicationIds: string[];
  removedApplicationIds: string[];
};

const membershipDelta = (
  organizationId: string,
  change: Partial<Omit<MembershipDelta, 'organizationId'>>,
): MembershipDelta => ({
  organizationId,
  addedUserIds: [],
  removedUserIds: [],
  addedApplicationIds: [],
  removedApplicationIds: [],
  ...change,
});

/** Adds users; those already members are left as they are (Logto's behaviour). */
export async function addOrganizationUsers(
  trx: Knex.Transaction,
  organizationId: string,
  userIds: string[],
): Promise<MembershipDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireUsers(trx, userIds);
  const addedUserIds = await addLinks(trx, organizationLinks.users(organizationId), userIds);
  return membershipDelta(organizationId, { addedUserIds });
}

/** Members not in `userIds` leave, with their organization roles. */
export async function replaceOrganizationUsers(
  trx: Knex.Transaction,
  organizationId: string,
  userIds: string[],
): Promise<MembershipDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireUsers(trx, userIds);
  const { added, removed } = await replaceLinks(trx, organizationLinks.users(organizationId), userIds);
  return membershipDelta(organizationId, { addedUserIds: added, removedUserIds: removed });
}

export async function removeOrganizationUser(
  trx: Knex.Transaction,
  organizationId: string,
  userId: string,
): Promise<MembershipDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  if ((await removeLinks(trx, organizationLinks.users(organizationId), [userId])) === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'organization member', id: userId });
  }
  return membershipDelta(organizationId, { removedUserIds: [userId] });
}

/** Adds machine-to-machine applications; those already members are left as they are. */
export async function addOrganizationApplications(
  trx: Knex.Transaction,
  organizationId: string,
  applicationIds: string[],
): Promise<MembershipDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireMachineApplications(trx, applicationIds);
  const addedApplicationIds = await addLinks(trx, organizationLinks.applications(organizationId), applicationIds);
  return membershipDelta(organizationId, { addedApplicationIds });
}

export async function replaceOrganizationApplications(
  trx: Knex.Transaction,
  organizationId: string,
  applicationIds: string[],
): Promise<MembershipDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireMachineApplications(trx, applicationIds);
  const { added, removed } = await replaceLinks(trx, organizationLinks.applications(organizationId), applicationIds);
  return membershipDelta(organizationId, { addedApplicationIds: added, removedApplicationIds: removed });
}

export async function removeOrganizationApplication(
  trx: Knex.Transaction,
  organizationId: string,
  applicationId: string,
): Promise<MembershipDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  if ((await removeLinks(trx, organizationLinks.applications(organizationId), [applicationId])) === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'organization application', id: applicationId });
  }
  return membershipDelta(organizationId, { removedApplicationIds: [applicationId] });
}

/** For an accepted invitation: joins the user if needed and reports whether they were added. */
export async function joinOrganization(
  trx: Knex.Transaction,
  organizationId: string,
  userId: string,
): Promise<MembershipDelta> {
  const addedUserIds = await addLinks(trx, organizationLinks.users(organizationId), [userId]);
  return membershipDelta(organizationId, { addedUserIds });
}
