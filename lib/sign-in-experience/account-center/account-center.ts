import { RequestError } from '../../http/errors.ts';
import { tenantId } from '../../shared/tenant.ts';
import type { Queryable } from '../../storage/database.ts';
import { findAccountCenter } from './account-center-queries.ts';
import { type AccountCenter, type AccountCenterField, accountCenterFields } from './account-center-schemas.ts';

/**
 * Until an administrator changes it: open, every field changeable, as this Account API was before
 * the setting existed (Logto ships it closed; a deployment that used the API keeps working).
 */
const untouched = {
  enabled: true,
  fields: Object.fromEntries(accountCenterFields.map((field) => [field, 'Edit'])),
} satisfies Pick<AccountCenter, 'enabled' | 'fields'>;

export async function currentAccountCenter(db: Queryable): Promise<AccountCenter> {
  return { tenantId, id: 'default', ...((await findAccountCenter(db)) ?? untouched) };
}

/** Every Account API request: 400 `account_center.not_enabled` while the account center is off. */
export function assertAccountCenterEnabled(center: AccountCenter): void {
  if (!center.enabled) {
    throw new RequestError('account_center.not_enabled');
  }
}

export const fieldShown = (center: AccountCenter, field: AccountCenterField): boolean =>
  (center.fields[field] ?? 'Off') !== 'Off';

/** A read of `field` alone (its own route): refused as Logto refuses it while the field is `Off`. */
export function assertFieldShown(center: AccountCenter, field: AccountCenterField): void {
  if (!fieldShown(center, field)) {
    throw new RequestError('account_center.field_not_editable', { field });
  }
}

/** A read of settings the account center hides (sessions, grants, what a person skips): 400 `account_center.field_not_enabled`. */
export function assertFieldEnabled(center: AccountCenter, field: AccountCenterField): void {
  if (!fieldShown(center, field)) {
    throw new RequestError('account_center.field_not_enabled', { field });
  }
}

/** A change to `field`: 400 `account_center.field_not_editable` unless it is `Edit`. */
export function assertFieldEditable(center: AccountCenter, field: AccountCenterField): void {
  if (center.fields[field] !== 'Edit') {
    throw new RequestError('account_center.field_not_editable', { field });
  }
}
