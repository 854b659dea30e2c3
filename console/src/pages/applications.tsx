import { useState } from 'preact/hooks';

import { api } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import {
  ConfirmButton,
  DeleteCard,
  Field,
  FormError,
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
  secret: string;
  oidcClientMetadata: { redirectUris: string[]; postLogoutRedirectUris: string[] };
  customClientMetadata: { allowTokenExchange?: boolean };
  createdAt: number;
};
type Role = { id: string; name: string; type: string };

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
          <Credentials application={loaded} />
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

function Credentials({ application }: { application: Application }) {
  const [shown, setShown] = useState(false);
  return (
    <section class="card" aria-label="Credentials">
      <h2>Credentials</h2>
      <dl>
        <dt>Application id (client_id)</dt>
        <dd>
          <code>{application.id}</code>
        </dd>
        {!isPublic(application.type) && (
          <>
            <dt>Secret</dt>
            <dd>
              <code data-testid="secret">{shown ? application.secret : '••••••••••••'}</code>{' '}
              <button type="button" onClick={() => setShown(!shown)}>
                {shown ? 'Hide secret' : 'Show secret'}
              </button>
            </dd>
          </>
        )}
      </dl>
      {isPublic(application.type) && <p>A public application has no secret: it signs users in with PKCE.</p>}
    </section>
  );
}

/** The specification's "Token exchange" section, with its "Allow token exchange" switch. */
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
    </section>
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
