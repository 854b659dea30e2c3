import { z } from 'zod';

import { fieldShown } from '../sign-in-experience/account-center/account-center.ts';
import type { AccountCenterField } from '../sign-in-experience/account-center/account-center-schemas.ts';
import type { Queryable } from '../storage/database.ts';
import { toUser, type UserRow } from '../users/queries.ts';
import { userProfileSchema, userSchema } from '../users/schemas.ts';
import { listSsoIdentities } from '../users/sso-identity-queries.ts';
import type { AccountSession } from './auth.ts';

/** `GET /my-account`: Logto's user profile response, each part present only where scope and account center allow. */
export const accountViewSchema = userSchema
  .omit({ profile: true })
  .extend({
    profile: userProfileSchema,
    ssoIdentities: z.array(z.record(z.string(), z.unknown())),
  })
  .partial()
  .extend({ id: z.string() });
export type AccountView = z.output<typeof accountViewSchema>;

/**
 * The account as its owner sees it (Logto's rule, in two filters): the token's scopes choose the
 * parts (`profile` the basic ones, `email`, `phone`, `address`, `custom_data`, `identities`),
 * then a field the account center sets to `Off` is left out.
 */
export async function accountView(
  db: Queryable,
  { center, scopes }: AccountSession,
  row: UserRow,
): Promise<AccountView> {
  const user = toUser(row);
  const { address, ...profile } = user.profile;
  const scoped: AccountView = {
    id: user.id,
    ...(scopes.has('identities') && {
      identities: user.identities,
      ssoIdentities: await listSsoIdentities(db, user.id),
    }),
    ...(scopes.has('custom_data') && { customData: user.customData }),
    ...(scopes.has('email') && { primaryEmail: user.primaryEmail }),
    ...(scopes.has('phone') && { primaryPhone: user.primaryPhone }),
    ...(scopes.has('profile') && {
      name: user.name,
      avatar: user.avatar,
      username: user.username,
      profile: { ...profile, ...(scopes.has('address') && address && { address }) },
      lastSignInAt: user.lastSignInAt,
      createdAt: user.createdAt,
      updatedAt: user.updatedAt,
      applicationId: user.applicationId,
      isSuspended: user.isSuspended,
      hasPassword: user.hasPassword,
    }),
  };
  const fieldOf: Partial<Record<string, AccountCenterField>> = {
    name: 'name',
    avatar: 'avatar',
    username: 'username',
    primaryEmail: 'email',
    primaryPhone: 'phone',
    profile: 'profile',
    customData: 'customData',
    identities: 'social',
    hasPassword: 'password',
  };
  return Object.fromEntries(
    Object.entries(scoped).filter(([key]) => {
      const field = fieldOf[key];
      return !field || fieldShown(center, field);
    }),
  ) as AccountView;
}
