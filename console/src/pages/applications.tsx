import { useState } from 'preact/hooks';

import { api } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import {
  ConfirmButton,
  DeleteCard,
  Field,
  FormError,
  formatTime,
  formValues,
  lines,
  Loaded,
  Switch,
  useAction,
  useLoad,
} from '../ui.tsx';

export type Application = {
  id: string;
  name: string;
  description: string | null;
  type: 'Native' | 'SPA' | 'Traditional' | 'MachineToMachine';
  /** The secret it was created with; absent once deleted (its named secrets remain). */
  secret?: string;
  oidcClientMetadata: { redirectUris: string[]; postLogoutRedirectUris: string[] };
  customClientMetadata: { allowTokenExchange?: boolean; delegation?: { allowedActorClientIds: string[] } };
  createdAt: number;
};
type Role = { id: string; name: string; type: string };
/** One of an application's named secrets (Logto's application secrets). */
type ApplicationSecret = { name: string; value: string; createdAt: number; expiresAt: number | null };

const types: Array<[Application['type'], string]> = [
  ['Traditional', 'Traditional web (a server keeps the secret)'],
  ['SPA', 'Single-page application (public)'],
  ['Native', 'Native / mobile (public)'],
  ['MachineToMachine', 'Machine-to-machine (client credentials)'],
];
const isPublic = (type: Application['type']) => type === 'SPA' || type === 'Native';

export function ApplicationsPage() {
  const list = useLoad<Application[]>('applications');
  const action = useAction();
  const create = (event: Event) => {
    const { name, type } = formValues(event);
    void action.run(async () => {
      const created = await api<Application>('POST', 'applications', { name, type });
      navigate(`/applications/${created.id}`);
    });
  };
  return (
    <>
      <h1>Applications</h1>
      <form class="card inline" onSubmit={create} aria-label="Create an application">
        <Field label="Name" name="name" error={action.error} required />
        <Field label="Type" name="type" error={action.error}>
          {(id) => (
            <select id={id} name="type">
              {types.map(([value, label]) => (
                <option value={value}>{label}</option>
              ))}
            </select>
          )}
        </Field>
        <button class="primary" disabled={action.busy}>
          Create application
        </button>
        <FormError error={action.error} fields={['name', 'type']} />
      </form>
      <Loaded state={list}>
        {(applications) => (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Type</th>
                <th>Application id</th>
              </tr>
            </thead>
            <tbody>
              {applications.map((application) => (
                <tr key={application.id}>
                  <td>
                    <Link to={`/applications/${application.id}`}>{application.name}</Link>
                  </td>
                  <td>{application.type}</td>
                  <td>
                    <code>{application.id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  );
}

export function ApplicationPage({ id }: { id: string }) {
  const application = useLoad<Application>(`applications/${id}`);
  return (
    <Loaded state={application}>
      {(loaded) => (
        <>
          <p>
            <Link to="/applications">← Applications</Link>
          </p>
          <h1>{loaded.name}</h1>
          <Settings application={loaded} onSaved={application.reload} />
          <Credentials application={loaded} onChanged={application.reload} />
          <TokenExchange application={loaded} onSaved={application.reload} />
          {loaded.type === 'MachineToMachine' && <ApplicationRoles id={loaded.id} />}
          <DeleteCard
            label="Delete application"
            question={`Delete the application ${loaded.name}? Its tokens stop working.`}
            path={`applications/${id}`}
            back="/applications"
          />
        </>
      )}
    </Loaded>
  );
}

function Settings({ application, onSaved }: { application: Application; onSaved: () => void }) {
  const action = useAction();
  const save = (event: Event) => {
    const values = formValues(event);
    void action.run(async () => {
      await api('PATCH', `applications/${application.id}`, {
        name: values.name,
        description: values.description || null,
        oidcClientMetadata: {
          redirectUris: lines(values.redirectUris),
          postLogoutRedirectUris: lines(values.postLogoutRedirectUris),
        },
      });
      onSaved();
    });
  };
  return (
    <form class="card" onSubmit={save} aria-label="Settings">
      <h2>Settings</h2>
      <p>
        Type: <strong>{application.type}</strong>
      </p>
      <Field label="Name" name="name" defaultValue={application.name} error={action.error} required />
      <Field label="Description" name="description" defaultValue={application.description ?? ''} error={action.error} />
      {application.type !== 'MachineToMachine' && (
        <>
          <Field label="Redirect URIs (one a line)" name="oidcClientMetadata" error={action.error}>
            {(id) => (
              <textarea
                id={id}
                name="redirectUris"
                rows={3}
                defaultValue={application.oidcClientMetadata.redirectUris.join('\n')}
              />
            )}
          </Field>
          <Field label="Post sign-out redirect URIs (one a line)" name="postLogoutRedirectUris">
            {(id) => (
              <textarea
                id={id}
                name="postLogoutRedirectUris"
                rows={2}
                defaultValue={application.oidcClientMetadata.postLogoutRedirectUris.join('\n')}
              />
            )}
          </Field>
        </>
      )}
      <FormError error={action.error} fields={['name', 'description', 'oidcClientMetadata']} />
      <button class="primary" disabled={action.busy}>
        Save
      </button>
      {action.done && <span role="status"> Saved.</span>}
    </form>
  );
}

function Credentials({ application, onChanged }: { application: Application; onChanged: () => void }) {
  const [shown, setShown] = useState(false);
  const action = useAction();
  const deleteLegacy = () =>
    action.run(async () => {
      await api('DELETE', `applications/${application.id}/legacy-secret`);
      onChanged();
    });
  return (
    <section class="card" aria-label="Credentials">
      <h2>Credentials</h2>
      <dl>
        <dt>Application id (client_id)</dt>
        <dd>
          <code>{application.id}</code>
        </dd>
        {!isPublic(application.type) && application.secret !== undefined && (
          <>
            <dt>Legacy secret</dt>
            <dd>
              <code data-testid="secret">{shown ? application.secret : '••••••••••••'}</code>{' '}
              <button type="button" onClick={() => setShown(!shown)}>
                {shown ? 'Hide secret' : 'Show secret'}
              </button>{' '}
              <ConfirmButton
                label="Delete secret"
                question="Delete the secret this application was created with? Clients still using it are refused at once; its named secrets keep working."
                onConfirm={deleteLegacy}
              />
            </dd>
          </>
        )}
      </dl>
      <FormError error={action.error} />
      {isPublic(application.type) ? (
        <p>A public application has no secret: it signs users in with PKCE.</p>
      ) : (
        <NamedSecrets id={application.id} />
      )}
    </section>
  );
}

/** `datetime-local`'s value (local time) as milliseconds since the epoch; empty: never expires. */
const expiryOf = (value: string | undefined) => (value ? new Date(value).getTime() : undefined);

/**
 * The application's named secrets: any of them that has not expired authenticates it, so a secret
 * is rotated by adding one, moving the clients to it and deleting the old one. A value is shown
 * once, when it is created.
 */
function NamedSecrets({ id }: { id: string }) {
  const secrets = useLoad<ApplicationSecret[]>(`applications/${id}/secrets`);
  const [created, setCreated] = useState<ApplicationSecret>();
  const adding = useAction();
  const deleting = useAction();
  const add = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const { name, expiresAt } = formValues(event);
    void adding.run(async () => {
      const secret = await api<ApplicationSecret>('POST', `applications/${id}/secrets`, {
        name,
        ...(expiresAt && { expiresAt: expiryOf(expiresAt) }),
      });
      setCreated(secret);
      form.reset();
      secrets.reload();
    });
  };
  const remove = (name: string) =>
    deleting.run(async () => {
      await api('DELETE', `applications/${id}/secrets/${encodeURIComponent(name)}`);
      if (created?.name === name) {
        setCreated(undefined);
      }
      secrets.reload();
    });
  return (
    <>
      <h3>Secrets</h3>
      <p>
        Any secret that has not expired authenticates the application: add a new one, move the clients to it, then
        delete the old one.
      </p>
      <Loaded state={secrets}>
        {(list) =>
          list.length === 0 ? (
            <p>No named secrets.</p>
          ) : (
            <table aria-label="Secrets">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Created</th>
                  <th>Expires</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {list.map((secret) => (
                  <tr key={secret.name}>
                    <td>{secret.name}</td>
                    <td>{formatTime(secret.createdAt)}</td>
                    <td>
                      {secret.expiresAt === null
                        ? 'Never'
                        : `${formatTime(secret.expiresAt)}${secret.expiresAt <= Date.now() ? ' (expired)' : ''}`}
                    </td>
                    <td>
                      <ConfirmButton
                        label="Delete"
                        question={`Delete the secret ${secret.name}? Clients still using it are refused at once.`}
                        onConfirm={() => remove(secret.name)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <FormError error={deleting.error} />
      {created && (
        <div role="status" class="notice">
          <p>
            New secret <strong>{created.name}</strong>: copy it now, it is not shown again.
          </p>
          <code data-testid="new-secret">{created.value}</code>
        </div>
      )}
      <form class="inline" onSubmit={add} aria-label="Add secret">
        <Field label="Secret name" name="name" error={adding.error} required />
        <Field label="Expires (optional)" name="expiresAt" type="datetime-local" error={adding.error} />
        <button disabled={adding.busy}>Add secret</button>
        <FormError error={adding.error} fields={['name', 'expiresAt']} />
      </form>
    </>
  );
}

/**
 * The specification's "Token exchange" section: its "Allow token exchange" switch, and the
 * delegation policy of the user tokens this application receives (which applications may act).
 */
function TokenExchange({ application, onSaved }: { application: Application; onSaved: () => void }) {
  const action = useAction();
  const allowed = application.customClientMetadata.allowTokenExchange === true;
  const toggle = (value: boolean) =>
    action.run(async () => {
      await api('PATCH', `applications/${application.id}`, { customClientMetadata: { allowTokenExchange: value } });
      onSaved();
    });
  return (
    <section class="card" aria-labelledby="token-exchange">
      <h2 id="token-exchange">Token exchange</h2>
      <p id="token-exchange-help">
        {isPublic(application.type)
          ? "Public applications (single-page and native) cannot keep a secret, so they cannot exchange tokens on a user's behalf."
          : "When on, this application may swap a user's access token for one for another API (RFC 8693), keeping the user as the subject; scopes are cut to what the user holds."}
      </p>
      <Switch
        label="Allow token exchange"
        checked={allowed}
        disabled={isPublic(application.type) || action.busy}
        onChange={toggle}
        describedBy="token-exchange-help"
      />
      <FormError error={action.error} />
      <DelegationPolicy application={application} onSaved={onSaved} />
    </section>
  );
}

function DelegationPolicy({ application, onSaved }: { application: Application; onSaved: () => void }) {
  const action = useAction();
  const allowed = application.customClientMetadata.delegation?.allowedActorClientIds ?? [];
  const save = (event: Event) => {
    const values = formValues(event);
    void action.run(async () => {
      await api('PATCH', `applications/${application.id}`, {
        customClientMetadata: { delegation: { allowedActorClientIds: lines(values.allowedActorClientIds) } },
      });
      onSaved();
    });
  };
  return (
    <form onSubmit={save} aria-label="Delegation">
      <h3>Delegation</h3>
      <p id="delegation-help">
        Which applications may act for this application's users (an exchange with an <code>actor_token</code>). Empty:
        any. One: the user tokens this application receives carry <code>may_act</code> naming it.
      </p>
      <Field label="Applications that may act (ids, one a line)" name="customClientMetadata" error={action.error}>
        {(id) => (
          <textarea
            id={id}
            name="allowedActorClientIds"
            rows={3}
            aria-describedby="delegation-help"
            defaultValue={allowed.join('\n')}
          />
        )}
      </Field>
      <FormError error={action.error} fields={['customClientMetadata']} />
      <button disabled={action.busy}>Save delegation</button>
      {action.done && <span role="status"> Saved.</span>}
    </form>
  );
}

function ApplicationRoles({ id }: { id: string }) {
  const held = useLoad<Role[]>(`applications/${id}/roles`);
  const all = useLoad<Role[]>('roles?type=MachineToMachine');
  const action = useAction();
  const add = (event: Event) => {
    const { roleId } = formValues(event);
    void action.run(() => api('POST', `applications/${id}/roles`, { roleIds: [roleId] }).then(held.reload));
  };
  return (
    <section class="card" aria-label="Roles">
      <h2>Roles</h2>
      <Loaded state={held}>
        {(roles) => (
          <ul>
            {roles.map((role) => (
              <li key={role.id}>
                <Link to={`/roles/${role.id}`}>{role.name}</Link>{' '}
                <ConfirmButton
                  label="Remove"
                  question={`Remove the role ${role.name} from this application?`}
                  onConfirm={() =>
                    action.run(() => api('DELETE', `applications/${id}/roles/${role.id}`).then(held.reload))
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline" onSubmit={add}>
        <Field label="Add a role" name="roleId">
          {(id) => (
            <select id={id} name="roleId" required>
              {(all.data ?? []).map((role) => (
                <option value={role.id}>{role.name}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>Add role</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}
