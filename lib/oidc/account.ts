import type { Account, FindAccount } from 'oidc-provider';

import { organizationIdsOfMember, rolesOfMembers } from '../organizations/members/member-queries.ts';
import { findRolesByIds, roleIdsOfUser } from '../roles/queries.ts';
import type { Queryable } from '../storage/database.ts';
import { customDataOfRow, findUserRow, identitiesOf, profileOfRow } from '../users/queries.ts';
import { listSsoIdentities } from '../users/sso-identity-queries.ts';

/** Logto's scope for the organizations a user belongs to (the `organizations` claim: their ids). */
export const organizationsScope = 'urn:logto:scope:organizations';

/** Logto's scope for the user's organization roles (the `organization_roles` claim: `<organization id>:<role name>`). */
export const organizationRolesScope = 'urn:logto:scope:organization_roles';

/** Logto's scope for the Account API's session routes: it adds no claim. */
export const sessionsScope = 'urn:logto:scope:sessions';

/** The scopes the provider itself grants (the OpenID ones and Logto's); any other names an API resource's. */
export const oidcScopes = [
  'openid',
  'offline_access',
  'profile',
  'email',
  'phone',
  'address',
  'custom_data',
  'identities',
  'roles',
  organizationsScope,
  organizationRolesScope,
  sessionsScope,
];

/** Standard claims a user's ID token and userinfo carry, by scope. */
export const claimsByScope = {
  openid: ['sub'],
  profile: [
    'name',
    'given_name',
    'family_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'username',
    'created_at',
    'updated_at',
  ],
  address: ['address'],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  custom_data: ['custom_data'],
  identities: ['identities', 'sso_identities'],
  roles: ['roles'],
  [organizationsScope]: ['organizations'],
  [organizationRolesScope]: ['organization_roles'],
};

const asked = (scope: string, name: string) => scope.split(' ').includes(name);

/**
 * Users as oidc-provider accounts. A suspended or deleted user is no account: their codes and
 * refresh tokens stop working even before the revocation sweep reaches them.
 */
export const findAccount =
  (db: Queryable): FindAccount =>
  async (_ctx, sub): Promise<Account | undefined> => {
    const user = await findUserRow(db, sub);
    if (!user || user.is_suspended) {
      return undefined;
    }
    const profile = profileOfRow(user);
    return {
      accountId: user.id,
      claims: async (_use, scope) => ({
        sub: user.id,
        name: user.name ?? undefined,
        given_name: profile.givenName,
        family_name: profile.familyName,
        middle_name: profile.middleName,
        nickname: profile.nickname,
        preferred_username: profile.preferredUsername,
        profile: profile.profile,
        website: profile.website,
        gender: profile.gender,
        birthdate: profile.birthdate,
        zoneinfo: profile.zoneinfo,
        locale: profile.locale,
        address: profile.address && {
          formatted: profile.address.formatted,
          street_address: profile.address.streetAddress,
          locality: profile.address.locality,
          region: profile.address.region,
          postal_code: profile.address.postalCode,
          country: profile.address.country,
        },
        picture: user.avatar ?? undefined,
        username: user.username ?? undefined,
        created_at: Math.floor(user.created_at / 1000),
        updated_at: Math.floor(user.updated_at / 1000),
        email: user.primary_email ?? undefined,
        // Emails and phones reach an account only through a verified code or an administrator.
        email_verified: user.primary_email ? true : undefined,
        phone_number: user.primary_phone ? `+${user.primary_phone}` : undefined,
        phone_number_verified: user.primary_phone ? true : undefined,
        // Read only when asked for: most sign-ins do not ask.
        custom_data: asked(scope, 'custom_data') ? customDataOfRow(user) : undefined,
        identities: asked(scope, 'identities') ? identitiesOf(user.identities) : undefined,
        sso_identities: asked(scope, 'identities')
          ? (await listSsoIdentities(db, user.id)).map(({ issuer, identityId, detail }) => ({
              issuer,
              identityId,
              detail,
            }))
          : undefined,
        roles: asked(scope, 'roles')
          ? (await findRolesByIds(db, await roleIdsOfUser(db, user.id))).map((role) => role.name)
          : undefined,
        organizations: asked(scope, organizationsScope)
          ? await organizationIdsOfMember(db, 'user', user.id)
          : undefined,
        organization_roles: asked(scope, organizationRolesScope) ? await organizationRolesOf(db, user.id) : undefined,
      }),
    };
  };

/** Logto's `organization_roles` claim: `<organization id>:<role name>` for every role held. */
async function organizationRolesOf(db: Queryable, userId: string): Promise<string[]> {
  const roles: string[] = [];
  for (const organizationId of await organizationIdsOfMember(db, 'user', userId)) {
    for (const role of (await rolesOfMembers(db, 'user', organizationId, [userId])).get(userId) ?? []) {
      roles.push(`${organizationId}:${role.name}`);
    }
  }
  return roles;
}
