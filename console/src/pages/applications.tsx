import { useState } from 'preact/hooks';

import type {
  Application as ApplicationAnswer,
  ApplicationSecret as ApplicationSecretAnswer,
} from '../../../lib/applications/schemas.ts';
import type { Role as RoleAnswer } from '../../../lib/roles/schemas.ts';
import { api } from '../api.ts';
import { enteredInstant, formatTime } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { Rich } from '../i18n/rich.tsx';
import { Link, navigate } from '../router.tsx';
import {
  ConfirmButton,
  DateTimeField,
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

/** `secret` is a legacy one (the bootstrap admin's, or imported); new applications have named secrets only. */
type Application = Pick<
  ApplicationAnswer,
  'id' | 'name' | 'description' | 'type' | 'secret' | 'oidcClientMetadata' | 'customClientMetadata' | 'createdAt'
>;
type Role = Pick<RoleAnswer, 'id' | 'name' | 'type'>;
/** One of an application's named secrets (Logto's application secrets). */
type ApplicationSecret = Pick<ApplicationSecretAnswer, 'name' | 'value' | 'createdAt' | 'expiresAt'>;

/** The types in the order the create form offers them (the API's values are Logto's). */
const types: Array<Application['type']> = ['Traditional', 'SPA', 'Native', 'MachineToMachine'];
/** What a type is called wherever the console shows one. */
const typeLabel = (type: Application['type']) => t(`applications.types.${type}`);
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
      <h1>{t('nav.applications')}</h1>
      <form class="card inline" onSubmit={create} aria-label={t('applications.create')}>
        <Field label={t('common.name')} name="name" error={action.error} required />
        <Field label={t('common.type')} name="type" error={action.error}>
          {(id) => (
            <select id={id} name="type">
              {types.map((type) => (
                <option value={type}>{t(`applications.typeChoices.${type}`)}</option>
              ))}
            </select>
          )}
        </Field>
        <button class="primary" disabled={action.busy}>
          {t('applications.createButton')}
        </button>
        <FormError error={action.error} fields={['name', 'type']} />
      </form>
      <Loaded state={list}>
        {(applications) => (
          <table>
            <thead>
              <tr>
                <th>{t('common.name')}</th>
                <th>{t('common.type')}</th>
                <th>{t('applications.applicationId')}</th>
              </tr>
            </thead>
            <tbody>
              {applications.map((application) => (
                <tr key={application.id}>
                  <td>
                    <Link to={`/applications/${application.id}`}>{application.name}</Link>
                  </td>
                  <td>{typeLabel(application.type)}</td>
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
            <Link to="/applications">{t('applications.back')}</Link>
          </p>
          <h1>{loaded.name}</h1>
          <Settings application={loaded} onSaved={application.reload} />
          <Credentials application={loaded} onChanged={application.reload} />
          <TokenExchange application={loaded} onSaved={application.reload} />
          {loaded.type === 'MachineToMachine' && <ApplicationRoles id={loaded.id} />}
          <DeleteCard
            label={t('applications.delete')}
            question={t('applications.confirmDelete', { name: loaded.name })}
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
    <form class="card" onSubmit={save} aria-label={t('common.settings')}>
      <h2>{t('common.settings')}</h2>
      <p>
        {t('applications.typeIs')} <strong>{typeLabel(application.type)}</strong>
      </p>
      <Field label={t('common.name')} name="name" defaultValue={application.name} error={action.error} required />
      <Field
        label={t('common.description')}
        name="description"
        defaultValue={application.description ?? ''}
        error={action.error}
      />
      {application.type !== 'MachineToMachine' && (
        <>
          <Field label={t('applications.redirectUris')} name="oidcClientMetadata" error={action.error}>
            {(id) => (
              <textarea
                id={id}
                name="redirectUris"
                rows={3}
                defaultValue={application.oidcClientMetadata.redirectUris.join('\n')}
              />
            )}
          </Field>
          <Field label={t('applications.postLogoutRedirectUris')} name="postLogoutRedirectUris">
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
        {t('common.save')}
      </button>
      {action.done && <span role="status"> {t('common.saved')}</span>}
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
    <section class="card" aria-label={t('applications.credentials')}>
      <h2>{t('applications.credentials')}</h2>
      <dl>
        <dt>{t('applications.clientId')}</dt>
        <dd>
          <code>{application.id}</code>
        </dd>
        {!isPublic(application.type) && application.secret !== undefined && (
          <>
            {/* The secret it was created with (the API's "legacy" secret, beside its named ones). */}
            <dt>{t('applications.defaultSecret')}</dt>
            <dd>
              <code data-testid="secret">{shown ? application.secret : '••••••••••••'}</code>{' '}
              <button type="button" onClick={() => setShown(!shown)}>
                {shown ? t('applications.hideSecret') : t('applications.showSecret')}
              </button>{' '}
              <ConfirmButton
                label={t('applications.deleteSecret')}
                question={t('applications.confirmDeleteDefault')}
                onConfirm={deleteLegacy}
              />
            </dd>
          </>
        )}
      </dl>
      <FormError error={action.error} />
      {isPublic(application.type) ? <p>{t('applications.publicNoSecret')}</p> : <NamedSecrets id={application.id} />}
    </section>
  );
}

function SecretRow({ secret, onDelete }: { secret: ApplicationSecret; onDelete: () => unknown }) {
  const [shown, setShown] = useState(false);
  return (
    <tr>
      <td>{secret.name}</td>
      <td>
        {shown && <code data-testid="secret-value">{secret.value}</code>}{' '}
        <button type="button" onClick={() => setShown(!shown)}>
          {shown ? t('common.hide') : t('common.show')}
        </button>
      </td>
      <td>{formatTime(secret.createdAt)}</td>
      <td>
        {secret.expiresAt === null
          ? t('common.never')
          : secret.expiresAt <= Date.now()
            ? t('applications.expired', { time: formatTime(secret.expiresAt) })
            : formatTime(secret.expiresAt)}
      </td>
      <td>
        <ConfirmButton
          label={t('common.delete')}
          question={t('applications.confirmDeleteSecret', { name: secret.name })}
          onConfirm={onDelete}
        />
      </td>
    </tr>
  );
}

/**
 * The application's named secrets (a confidential application is created with its "Default secret"):
 * any of them that has not expired authenticates it, so a secret is rotated by adding one, moving the
 * clients to it and deleting the old one. A value is hidden until asked for, as the legacy secret is.
 */
function NamedSecrets({ id }: { id: string }) {
  const secrets = useLoad<ApplicationSecret[]>(`applications/${id}/secrets`);
  const [created, setCreated] = useState<ApplicationSecret>();
  const adding = useAction();
  const deleting = useAction();
  const add = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const values = formValues(event);
    void adding.run(async () => {
      // Empty: the secret never expires.
      const expiresAt = enteredInstant(values, 'expiresAt');
      const secret = await api<ApplicationSecret>('POST', `applications/${id}/secrets`, {
        name: values.name,
        ...(expiresAt !== undefined && { expiresAt }),
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
      <h3>{t('applications.secrets')}</h3>
      <p>{t('applications.secretsIntro')}</p>
      <Loaded state={secrets}>
        {(list) =>
          list.length === 0 ? (
            <p>{t('applications.noSecrets')}</p>
          ) : (
            <table aria-label={t('applications.secrets')}>
              <thead>
                <tr>
                  <th>{t('common.name')}</th>
                  <th>{t('applications.value')}</th>
                  <th>{t('applications.created')}</th>
                  <th>{t('applications.expires')}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {list.map((secret) => (
                  <SecretRow key={secret.name} secret={secret} onDelete={() => remove(secret.name)} />
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
            <Rich text={t('applications.newSecret', { name: created.name })} />
          </p>
          <code data-testid="new-secret">{created.value}</code>
        </div>
      )}
      <form class="inline" onSubmit={add} aria-label={t('applications.addSecret')}>
        <Field label={t('applications.secretName')} name="name" error={adding.error} required />
        <DateTimeField label={t('applications.expiresOptional')} name="expiresAt" error={adding.error} />
        <button disabled={adding.busy}>{t('applications.addSecret')}</button>
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
      await api('PATCH', `applications/${application.id}`, {
        // A PATCH replaces customClientMetadata whole (as Logto's): send the rest with the switch.
        customClientMetadata: { ...application.customClientMetadata, allowTokenExchange: value },
      });
      onSaved();
    });
  return (
    <section class="card" aria-labelledby="token-exchange">
      <h2 id="token-exchange">{t('applications.tokenExchange')}</h2>
      <p id="token-exchange-help">
        {isPublic(application.type) ? t('applications.tokenExchangePublic') : t('applications.tokenExchangeHelp')}
      </p>
      <Switch
        label={t('applications.allowTokenExchange')}
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
  const others = useLoad<Application[]>('applications');
  const allowed = new Set(application.customClientMetadata.delegation?.allowedActorClientIds ?? []);
  const save = (event: Event) => {
    event.preventDefault();
    const chosen = new FormData(event.currentTarget as HTMLFormElement).getAll('allowedActorClientIds');
    void action.run(async () => {
      await api('PATCH', `applications/${application.id}`, {
        customClientMetadata: {
          ...application.customClientMetadata,
          delegation: { allowedActorClientIds: chosen.map(String) },
        },
      });
      onSaved();
    });
  };
  return (
    <form onSubmit={save} aria-label={t('applications.delegation')}>
      <h3>{t('applications.delegation')}</h3>
      <p id="delegation-help">
        <Rich text={t('applications.delegationHelp')} />
      </p>
      <Loaded state={others}>
        {(applications) => (
          <fieldset aria-describedby="delegation-help">
            <legend>{t('applications.mayAct')}</legend>
            {applications
              .filter((other) => other.id !== application.id)
              .map((other) => (
                <label key={other.id} class="check">
                  <input
                    type="checkbox"
                    name="allowedActorClientIds"
                    value={other.id}
                    defaultChecked={allowed.has(other.id)}
                  />{' '}
                  {other.name} <span class="hint">({typeLabel(other.type)})</span>
                </label>
              ))}
          </fieldset>
        )}
      </Loaded>
      <FormError error={action.error} fields={['customClientMetadata']} />
      <button disabled={action.busy}>{t('applications.saveDelegation')}</button>
      {action.done && <span role="status"> {t('common.saved')}</span>}
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
    <section class="card" aria-label={t('common.roles')}>
      <h2>{t('common.roles')}</h2>
      <Loaded state={held}>
        {(roles) => (
          <ul>
            {roles.map((role) => (
              <li key={role.id}>
                <Link to={`/roles/${role.id}`}>{role.name}</Link>{' '}
                <ConfirmButton
                  label={t('common.remove')}
                  question={t('applications.confirmRemoveRole', { name: role.name })}
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
        <Field label={t('applications.addRole')} name="roleId">
          {(id) => (
            <select id={id} name="roleId" required>
              {(all.data ?? []).map((role) => (
                <option value={role.id}>{role.name}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>{t('applications.addRoleButton')}</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}
