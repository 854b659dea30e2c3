import { useState } from 'preact/hooks';

import type { Organization as OrganizationAnswer } from '../../../lib/organizations/schemas.ts';
import type { Role as RoleAnswer } from '../../../lib/roles/schemas.ts';
import { isUrlClientId } from '../../../lib/shared/url-client-ids.ts';
import type { User as UserAnswer } from '../../../lib/users/schemas.ts';
import { api, ApiError } from '../api.ts';
import { formatTime } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { Rich } from '../i18n/rich.tsx';
import { Link, navigate } from '../router.tsx';
import {
  ConfirmButton,
  DeleteCard,
  Field,
  FormError,
  formValues,
  Loaded,
  Switch,
  useAction,
  useLoad,
  useLoadPage,
} from '../ui.tsx';

type User = Pick<
  UserAnswer,
  | 'id'
  | 'username'
  | 'primaryEmail'
  | 'primaryPhone'
  | 'name'
  | 'customData'
  | 'isSuspended'
  | 'lastSignInAt'
  | 'createdAt'
>;
type Role = Pick<RoleAnswer, 'id' | 'name'>;
type Organization = Pick<OrganizationAnswer, 'id' | 'name'>;
type MfaFactor = { id: string; type: string; createdAt: string; lastUsedAt?: string; remainCodes?: number };
/** A consent the user gave an application (the provider's grant): what it may ask for without asking again. */
type Grant = {
  id: string;
  payload: { clientId: string; iat: number; openid?: { scope?: string }; resources?: Record<string, string> };
  expiresAt: number;
};

const orNull = (value: string | undefined) => (value ? value : null);
/** The text typed, anywhere in a field: a LIKE pattern (Logto's `search`) with its own %, _ and \ kept plain. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;

export function UsersPage() {
  const [search, setSearch] = useState('');
  const query = `users?page_size=50${search ? `&search=${encodeURIComponent(containing(search))}` : ''}`;
  const list = useLoadPage<User>(query);
  const action = useAction();
  const create = (event: Event) => {
    const { username, primaryEmail, password, name } = formValues(event);
    void action.run(async () => {
      const created = await api<User>('POST', 'users', {
        username: username || undefined,
        primaryEmail: primaryEmail || undefined,
        password: password || undefined,
        name: name || undefined,
      });
      navigate(`/users/${created.id}`);
    });
  };
  return (
    <>
      <h1>{t('nav.users')}</h1>
      <form class="card inline" onSubmit={create} aria-label={t('users.create')}>
        <Field label={t('common.username')} name="username" error={action.error} autocomplete="off" />
        <Field label={t('common.email')} name="primaryEmail" type="email" error={action.error} autocomplete="off" />
        <Field label={t('common.name')} name="name" error={action.error} autocomplete="off" />
        <Field
          label={t('common.password')}
          name="password"
          type="password"
          error={action.error}
          autocomplete="new-password"
        />
        <button class="primary" disabled={action.busy}>
          {t('users.createButton')}
        </button>
        <FormError error={action.error} fields={['username', 'primaryEmail', 'name', 'password']} />
      </form>
      <form role="search" onSubmit={(event) => setSearch(formValues(event).search ?? '')}>
        <Field
          label={t('users.search')}
          name="search"
          type="search"
          placeholder={t('users.searchPlaceholder')}
          defaultValue={search}
        />
      </form>
      <Loaded state={list}>
        {(page) => (
          <>
            <p>
              {page.total > page.items.length
                ? t('users.firstShown', { total: t('users.count', { count: page.total }), shown: page.items.length })
                : t('users.count', { count: page.total })}
            </p>
            <table>
              <thead>
                <tr>
                  <th>{t('common.user')}</th>
                  <th>{t('common.email')}</th>
                  <th>{t('users.lastSignIn')}</th>
                  <th>{t('users.status')}</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((user) => (
                  <tr key={user.id}>
                    <td>
                      <Link to={`/users/${user.id}`}>{user.name ?? user.username ?? user.id}</Link>
                    </td>
                    <td>{user.primaryEmail}</td>
                    <td>{formatTime(user.lastSignInAt)}</td>
                    <td>{user.isSuspended ? t('users.suspended') : t('users.active')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Loaded>
    </>
  );
}

export function UserPage({ id }: { id: string }) {
  const user = useLoad<User>(`users/${id}`);
  const action = useAction();
  return (
    <Loaded state={user}>
      {(loaded) => (
        <>
          <p>
            <Link to="/users">{t('users.back')}</Link>
          </p>
          <h1>{loaded.name ?? loaded.username ?? loaded.id}</h1>
          <p>
            <Rich
              text={t('users.summary', {
                id: loaded.id,
                created: formatTime(loaded.createdAt),
                lastSignIn: formatTime(loaded.lastSignInAt),
              })}
            />
          </p>
          <Profile user={loaded} onSaved={user.reload} />
          <CustomData user={loaded} onSaved={user.reload} />
          <Password userId={id} />
          <section class="card" aria-labelledby="standing">
            <h2 id="standing">{t('users.standing')}</h2>
            <Switch
              label={t('users.suspended')}
              checked={loaded.isSuspended}
              onChange={(isSuspended) =>
                action.run(() => api('PATCH', `users/${id}/is-suspended`, { isSuspended }).then(user.reload))
              }
            />
            <p>{t('users.suspendedHelp')}</p>
            <Unlock user={loaded} />
            <FormError error={action.error} />
          </section>
          <UserRoles userId={id} />
          <UserOrganizations userId={id} />
          <MfaFactors userId={id} />
          <AppsWithAccess userId={id} />
          <DeleteCard
            label={t('users.delete')}
            question={t('users.confirmDelete', { name: loaded.username ?? loaded.id })}
            path={`users/${id}`}
            back="/users"
          />
        </>
      )}
    </Loaded>
  );
}

function Profile({ user, onSaved }: { user: User; onSaved: () => void }) {
  const action = useAction();
  const save = (event: Event) => {
    const values = formValues(event);
    void action.run(async () => {
      await api('PATCH', `users/${user.id}`, {
        username: orNull(values.username),
        primaryEmail: orNull(values.primaryEmail),
        primaryPhone: orNull(values.primaryPhone),
        name: orNull(values.name),
      });
      onSaved();
    });
  };
  return (
    <form class="card" onSubmit={save} aria-label={t('users.profile')}>
      <h2>{t('users.profile')}</h2>
      <Field label={t('common.username')} name="username" defaultValue={user.username ?? ''} error={action.error} />
      <Field
        label={t('common.email')}
        name="primaryEmail"
        type="email"
        defaultValue={user.primaryEmail ?? ''}
        error={action.error}
      />
      <Field
        label={t('common.phone')}
        name="primaryPhone"
        type="tel"
        defaultValue={user.primaryPhone ?? ''}
        error={action.error}
      />
      <Field label={t('common.name')} name="name" defaultValue={user.name ?? ''} error={action.error} />
      <FormError error={action.error} fields={['username', 'primaryEmail', 'primaryPhone', 'name']} />
      <button class="primary" disabled={action.busy}>
        {t('users.saveProfile')}
      </button>
      {action.done && <span role="status"> {t('common.saved')}</span>}
    </form>
  );
}

function CustomData({ user, onSaved }: { user: User; onSaved: () => void }) {
  const action = useAction();
  const save = (event: Event) => {
    const { customData } = formValues(event);
    void action.run(async () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(customData || '{}');
      } catch {
        throw new ApiError(400, 'console.invalid_json', t('users.customDataInvalid'), undefined, [
          { in: 'body', path: 'customData', message: t('users.notJson') },
        ]);
      }
      await api('PATCH', `users/${user.id}/custom-data`, { customData: parsed });
      onSaved();
    });
  };
  return (
    <form class="card" onSubmit={save} aria-label={t('users.customData')}>
      <h2>{t('users.customData')}</h2>
      <Field label={t('users.customDataJson')} name="customData" error={action.error}>
        {(id) => (
          <textarea
            id={id}
            name="customData"
            rows={4}
            class="mono"
            defaultValue={JSON.stringify(user.customData, null, 2)}
          />
        )}
      </Field>
      <FormError error={action.error} fields={['customData']} />
      <button disabled={action.busy}>{t('users.saveCustomData')}</button>
    </form>
  );
}

function Password({ userId }: { userId: string }) {
  const action = useAction();
  const save = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const { password } = formValues(event);
    void action.run(async () => {
      await api('PATCH', `users/${userId}/password`, { password });
      form.reset();
    });
  };
  return (
    <form class="card" onSubmit={save} aria-label={t('users.resetPassword')}>
      <h2>{t('users.resetPassword')}</h2>
      <Field
        label={t('users.newPassword')}
        name="password"
        type="password"
        autocomplete="new-password"
        error={action.error}
        required
      />
      <FormError error={action.error} fields={['password']} />
      <button disabled={action.busy}>{t('users.setPassword')}</button>
      {action.done && <span role="status"> {t('users.passwordChanged')}</span>}
    </form>
  );
}

/** Lockout counts failures per identifier as typed: unlocking clears every identifier of the user. */
function Unlock({ user }: { user: User }) {
  const action = useAction();
  const targets = [user.username, user.primaryEmail?.toLowerCase(), user.primaryPhone].filter(
    (value): value is string => Boolean(value),
  );
  return (
    <p>
      <button
        type="button"
        disabled={action.busy || targets.length === 0}
        onClick={() => void action.run(() => api('POST', 'sentinel-activities/delete', { targets }))}
      >
        {t('users.unlock')}
      </button>{' '}
      {action.done ? (
        <span role="status">{t('users.unlocked')}</span>
      ) : (
        <small>{t('users.unlockHelp', { identifiers: targets.join(', ') || t('users.noIdentifier') })}</small>
      )}
      <FormError error={action.error} />
    </p>
  );
}

function UserRoles({ userId }: { userId: string }) {
  const held = useLoad<Role[]>(`users/${userId}/roles`);
  const all = useLoad<Role[]>('roles?type=User');
  const action = useAction();
  const add = (event: Event) => {
    const { roleId } = formValues(event);
    void action.run(() => api('POST', `users/${userId}/roles`, { roleIds: [roleId] }).then(held.reload));
  };
  return (
    <section class="card" aria-labelledby="user-roles">
      <h2 id="user-roles">{t('common.roles')}</h2>
      <Loaded state={held}>
        {(roles) => (
          <ul>
            {roles.map((role) => (
              <li key={role.id}>
                <Link to={`/roles/${role.id}`}>{role.name}</Link>{' '}
                <ConfirmButton
                  label={t('common.remove')}
                  question={t('users.confirmRemoveRole', { name: role.name })}
                  onConfirm={() =>
                    action.run(() => api('DELETE', `users/${userId}/roles/${role.id}`).then(held.reload))
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline" onSubmit={add} aria-label={t('users.assignRole')}>
        <Field label={t('common.role')} name="roleId">
          {(id) => (
            <select id={id} name="roleId" required>
              {(all.data ?? []).map((role) => (
                <option value={role.id}>{role.name}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>{t('users.assignRoleButton')}</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}

function UserOrganizations({ userId }: { userId: string }) {
  const organizations = useLoad<Organization[]>(`users/${userId}/organizations`);
  return (
    <section class="card" aria-labelledby="user-organizations">
      <h2 id="user-organizations">{t('users.organizations')}</h2>
      <Loaded state={organizations}>
        {(items) =>
          items.length === 0 ? (
            <p>{t('users.noOrganizations')}</p>
          ) : (
            <ul>
              {items.map((organization) => (
                <li key={organization.id}>
                  <Link to={`/organizations/${organization.id}`}>{organization.name}</Link>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

/** MFA factors (TOTP, backup codes, ...): an administrator removes a lost one. */
function MfaFactors({ userId }: { userId: string }) {
  const factors = useLoad<MfaFactor[]>(`users/${userId}/mfa-verifications`);
  const action = useAction();
  return (
    <section class="card" aria-labelledby="user-mfa">
      <h2 id="user-mfa">{t('users.mfa')}</h2>
      <Loaded state={factors}>
        {(items) =>
          items.length === 0 ? (
            <p>{t('users.noMfa')}</p>
          ) : (
            <ul>
              {items.map((factor) => (
                <li key={factor.id}>
                  {factor.type}{' '}
                  <small>
                    {t('users.factorAdded', { time: formatTime(Date.parse(factor.createdAt)) })}
                    {factor.remainCodes !== undefined && `, ${t('users.codesLeft', { count: factor.remainCodes })}`}
                  </small>{' '}
                  <ConfirmButton
                    label={t('common.remove')}
                    question={t('users.confirmRemoveFactor', { type: factor.type })}
                    onConfirm={() =>
                      action.run(() =>
                        api('DELETE', `users/${userId}/mfa-verifications/${factor.id}`).then(factors.reload),
                      )
                    }
                  />
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <FormError error={action.error} />
    </section>
  );
}

/** The scopes a grant holds: the OpenID ones, then each API's, named by its indicator. */
const grantedScopes = (grant: Grant): string[] => [
  ...(grant.payload.openid?.scope?.split(' ') ?? []),
  ...Object.entries(grant.payload.resources ?? {}).flatMap(([indicator, scope]) =>
    scope ? scope.split(' ').map((name) => `${name} (${indicator})`) : [],
  ),
];

/** An application by its name, or its id when it was deleted. */
function ApplicationName({ id }: { id: string }) {
  // A client named by a URL (a Client ID Metadata Document) has no application: the URL is its name.
  return isUrlClientId(id) ? <code>{id}</code> : <RegisteredApplicationName id={id} />;
}

function RegisteredApplicationName({ id }: { id: string }) {
  const application = useLoad<{ name: string }>(`applications/${id}`);
  return application.data ? <Link to={`/applications/${id}`}>{application.data.name}</Link> : <code>{id}</code>;
}

/**
 * Apps with access: the grants the user gave at consent (Logto's user grants). Revoking one ends the
 * application's refresh tokens; its next sign-in asks for consent again.
 */
function AppsWithAccess({ userId }: { userId: string }) {
  const grants = useLoad<{ grants: Grant[] }>(`users/${userId}/grants`);
  const action = useAction();
  return (
    <section class="card" aria-labelledby="user-grants">
      <h2 id="user-grants">{t('users.apps')}</h2>
      <Loaded state={grants}>
        {({ grants: items }) =>
          items.length === 0 ? (
            <p>{t('users.noApps')}</p>
          ) : (
            <ul>
              {items.map((grant) => (
                <li key={grant.id}>
                  <ApplicationName id={grant.payload.clientId} />{' '}
                  <small>
                    {t('users.grantPeriod', {
                      since: formatTime(grant.payload.iat * 1000),
                      until: formatTime(grant.expiresAt),
                    })}
                    {grantedScopes(grant).length > 0 && ` · ${grantedScopes(grant).join(', ')}`}
                  </small>{' '}
                  <ConfirmButton
                    label={t('users.revoke')}
                    question={t('users.confirmRevoke')}
                    onConfirm={() =>
                      action.run(() => api('DELETE', `users/${userId}/grants/${grant.id}`).then(grants.reload))
                    }
                  />
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <FormError error={action.error} />
    </section>
  );
}
