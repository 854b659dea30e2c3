import { useState } from 'preact/hooks';

import { isUrlClientId } from '../../../lib/shared/url-client-ids.ts';
import { api, ApiError } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import {
  ConfirmButton,
  DeleteCard,
  Field,
  FormError,
  formatTime,
  formValues,
  Loaded,
  Switch,
  useAction,
  useLoad,
  useLoadPage,
} from '../ui.tsx';

type User = {
  id: string;
  username: string | null;
  primaryEmail: string | null;
  primaryPhone: string | null;
  name: string | null;
  customData: Record<string, unknown>;
  isSuspended: boolean;
  lastSignInAt: number | null;
  createdAt: number;
};
type Role = { id: string; name: string };
type Organization = { id: string; name: string };
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
      <h1>Users</h1>
      <form class="card inline" onSubmit={create} aria-label="Create a user">
        <Field label="Username" name="username" error={action.error} autocomplete="off" />
        <Field label="Email" name="primaryEmail" type="email" error={action.error} autocomplete="off" />
        <Field label="Name" name="name" error={action.error} autocomplete="off" />
        <Field label="Password" name="password" type="password" error={action.error} autocomplete="new-password" />
        <button class="primary" disabled={action.busy}>
          Create user
        </button>
        <FormError error={action.error} fields={['username', 'primaryEmail', 'name', 'password']} />
      </form>
      <form role="search" onSubmit={(event) => setSearch(formValues(event).search ?? '')}>
        <Field
          label="Search users"
          name="search"
          type="search"
          placeholder="name, username, email, phone or id"
          defaultValue={search}
        />
      </form>
      <Loaded state={list}>
        {(page) => (
          <>
            <p>
              {page.total} user{page.total === 1 ? '' : 's'}
              {page.total > page.items.length ? `, the first ${page.items.length} shown` : ''}
            </p>
            <table>
              <thead>
                <tr>
                  <th>User</th>
                  <th>Email</th>
                  <th>Last sign-in</th>
                  <th>Status</th>
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
                    <td>{user.isSuspended ? 'Suspended' : 'Active'}</td>
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
            <Link to="/users">← Users</Link>
          </p>
          <h1>{loaded.name ?? loaded.username ?? loaded.id}</h1>
          <p>
            User id <code>{loaded.id}</code> · created {formatTime(loaded.createdAt)} · last sign-in{' '}
            {formatTime(loaded.lastSignInAt)}
          </p>
          <Profile user={loaded} onSaved={user.reload} />
          <CustomData user={loaded} onSaved={user.reload} />
          <Password userId={id} />
          <section class="card" aria-labelledby="standing">
            <h2 id="standing">Account standing</h2>
            <Switch
              label="Suspended"
              checked={loaded.isSuspended}
              onChange={(isSuspended) =>
                action.run(() => api('PATCH', `users/${id}/is-suspended`, { isSuspended }).then(user.reload))
              }
            />
            <p>A suspended user cannot sign in; their sessions and refresh tokens end at once.</p>
            <Unlock user={loaded} />
            <FormError error={action.error} />
          </section>
          <UserRoles userId={id} />
          <UserOrganizations userId={id} />
          <MfaFactors userId={id} />
          <AppsWithAccess userId={id} />
          <DeleteCard
            label="Delete user"
            question={`Delete ${loaded.username ?? loaded.id}? This cannot be undone.`}
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
    <form class="card" onSubmit={save} aria-label="Profile">
      <h2>Profile</h2>
      <Field label="Username" name="username" defaultValue={user.username ?? ''} error={action.error} />
      <Field
        label="Email"
        name="primaryEmail"
        type="email"
        defaultValue={user.primaryEmail ?? ''}
        error={action.error}
      />
      <Field label="Phone" name="primaryPhone" type="tel" defaultValue={user.primaryPhone ?? ''} error={action.error} />
      <Field label="Name" name="name" defaultValue={user.name ?? ''} error={action.error} />
      <FormError error={action.error} fields={['username', 'primaryEmail', 'primaryPhone', 'name']} />
      <button class="primary" disabled={action.busy}>
        Save profile
      </button>
      {action.done && <span role="status"> Saved.</span>}
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
        throw new ApiError(400, 'console.invalid_json', 'Custom data must be a JSON object.', undefined, [
          { in: 'body', path: 'customData', message: 'not valid JSON' },
        ]);
      }
      await api('PATCH', `users/${user.id}/custom-data`, { customData: parsed });
      onSaved();
    });
  };
  return (
    <form class="card" onSubmit={save} aria-label="Custom data">
      <h2>Custom data</h2>
      <Field label="Custom data (JSON)" name="customData" error={action.error}>
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
      <button disabled={action.busy}>Save custom data</button>
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
    <form class="card" onSubmit={save} aria-label="Reset password">
      <h2>Reset password</h2>
      <Field
        label="New password"
        name="password"
        type="password"
        autocomplete="new-password"
        error={action.error}
        required
      />
      <FormError error={action.error} fields={['password']} />
      <button disabled={action.busy}>Set password</button>
      {action.done && <span role="status"> Password changed.</span>}
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
        Unlock sign-in
      </button>{' '}
      {action.done ? (
        <span role="status">Failed attempts cleared; the user can sign in again.</span>
      ) : (
        <small>Clears failed sign-in attempts on {targets.join(', ') || 'no identifier'}.</small>
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
      <h2 id="user-roles">Roles</h2>
      <Loaded state={held}>
        {(roles) => (
          <ul>
            {roles.map((role) => (
              <li key={role.id}>
                <Link to={`/roles/${role.id}`}>{role.name}</Link>{' '}
                <ConfirmButton
                  label="Remove"
                  question={`Take the role ${role.name} from this user?`}
                  onConfirm={() =>
                    action.run(() => api('DELETE', `users/${userId}/roles/${role.id}`).then(held.reload))
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline" onSubmit={add} aria-label="Assign a role">
        <Field label="Role" name="roleId">
          {(id) => (
            <select id={id} name="roleId" required>
              {(all.data ?? []).map((role) => (
                <option value={role.id}>{role.name}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>Assign role</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}

function UserOrganizations({ userId }: { userId: string }) {
  const organizations = useLoad<Organization[]>(`users/${userId}/organizations`);
  return (
    <section class="card" aria-labelledby="user-organizations">
      <h2 id="user-organizations">Organizations</h2>
      <Loaded state={organizations}>
        {(items) =>
          items.length === 0 ? (
            <p>Not a member of any organization.</p>
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
      <h2 id="user-mfa">MFA factors</h2>
      <Loaded state={factors}>
        {(items) =>
          items.length === 0 ? (
            <p>No MFA factor set up.</p>
          ) : (
            <ul>
              {items.map((factor) => (
                <li key={factor.id}>
                  {factor.type}{' '}
                  <small>
                    added {formatTime(Date.parse(factor.createdAt))}
                    {factor.remainCodes !== undefined && `, ${factor.remainCodes} codes left`}
                  </small>{' '}
                  <ConfirmButton
                    label="Remove"
                    question={`Remove this ${factor.type} factor? The user sets it up again at next sign-in.`}
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
      <h2 id="user-grants">Apps with access</h2>
      <Loaded state={grants}>
        {({ grants: items }) =>
          items.length === 0 ? (
            <p>No application has access.</p>
          ) : (
            <ul>
              {items.map((grant) => (
                <li key={grant.id}>
                  <ApplicationName id={grant.payload.clientId} />{' '}
                  <small>
                    since {formatTime(grant.payload.iat * 1000)}, until {formatTime(grant.expiresAt)}
                    {grantedScopes(grant).length > 0 && ` · ${grantedScopes(grant).join(', ')}`}
                  </small>{' '}
                  <ConfirmButton
                    label="Revoke"
                    question="Revoke this application's access? Its refresh tokens end now; the user is asked for consent again."
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
