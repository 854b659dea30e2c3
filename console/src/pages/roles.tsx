import { useState } from 'preact/hooks';

import type { Resource as ResourceAnswer, Scope as ScopeAnswer } from '../../../lib/resources/schemas.ts';
import type { Role as RoleAnswer } from '../../../lib/roles/schemas.ts';
import type { User } from '../../../lib/users/schemas.ts';
import { api } from '../api.ts';
import { t } from '../i18n/index.ts';
import { Link, navigate } from '../router.tsx';
import { ConfirmButton, DeleteCard, Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type Role = Pick<RoleAnswer, 'id' | 'name' | 'description' | 'type' | 'isDefault'>;
/** A resource's scope; a role's scopes come with their resource. */
type Scope = Pick<ScopeAnswer, 'id' | 'name' | 'resourceId'> & { resource?: Pick<ResourceAnswer, 'name'> };
type Resource = Pick<ResourceAnswer, 'id' | 'name'>;
/** A user or an application holding the role (only users have a username). */
type Holder = Pick<User, 'id' | 'name'> & Partial<Pick<User, 'username'>>;

export function RolesPage() {
  const list = useLoad<Role[]>('roles');
  const action = useAction();
  const create = (event: Event) => {
    const { name, description, type } = formValues(event);
    void action.run(async () => {
      const created = await api<Role>('POST', 'roles', { name, description, type });
      navigate(`/roles/${created.id}`);
    });
  };
  return (
    <>
      <h1>{t('nav.roles')}</h1>
      <form class="card inline" onSubmit={create} aria-label={t('roles.create')}>
        <Field label={t('common.name')} name="name" error={action.error} required />
        <Field label={t('common.description')} name="description" error={action.error} required />
        <Field label={t('common.type')} name="type">
          {(id) => (
            <select id={id} name="type">
              <option value="User">{t('roles.types.User')}</option>
              <option value="MachineToMachine">{t('roles.types.MachineToMachine')}</option>
            </select>
          )}
        </Field>
        <button class="primary" disabled={action.busy}>
          {t('roles.createButton')}
        </button>
        <FormError error={action.error} fields={['name', 'description']} />
      </form>
      <Loaded state={list}>
        {(roles) => (
          <table>
            <thead>
              <tr>
                <th>{t('common.name')}</th>
                <th>{t('common.type')}</th>
                <th>{t('common.description')}</th>
              </tr>
            </thead>
            <tbody>
              {roles.map((role) => (
                <tr key={role.id}>
                  <td>
                    <Link to={`/roles/${role.id}`}>{role.name}</Link>
                    {role.isDefault ? ` ${t('roles.default')}` : ''}
                  </td>
                  <td>{t(`roles.types.${role.type}`)}</td>
                  <td>{role.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  );
}

export function RolePage({ id }: { id: string }) {
  const role = useLoad<Role>(`roles/${id}`);
  const action = useAction();
  const save = (event: Event) => {
    const { name, description } = formValues(event);
    void action.run(async () => {
      await api('PATCH', `roles/${id}`, { name, description });
      role.reload();
    });
  };
  return (
    <Loaded state={role}>
      {(loaded) => (
        <>
          <p>
            <Link to="/roles">{t('roles.back')}</Link>
          </p>
          <h1>{loaded.name}</h1>
          <form class="card" onSubmit={save} aria-label={t('common.settings')}>
            <h2>{t('roles.settingsOf', { type: t(`roles.types.${loaded.type}`) })}</h2>
            <Field label={t('common.name')} name="name" defaultValue={loaded.name} error={action.error} required />
            <Field
              label={t('common.description')}
              name="description"
              defaultValue={loaded.description}
              error={action.error}
              required
            />
            <FormError error={action.error} fields={['name', 'description']} />
            <button class="primary" disabled={action.busy}>
              {t('common.save')}
            </button>
            {action.done && <span role="status"> {t('common.saved')}</span>}
          </form>
          <RolePermissions roleId={id} />
          <RoleHolders roleId={id} kind={loaded.type === 'User' ? 'users' : 'applications'} />
          <DeleteCard
            label={t('roles.delete')}
            question={t('roles.confirmDelete', { name: loaded.name })}
            path={`roles/${id}`}
            back="/roles"
          />
        </>
      )}
    </Loaded>
  );
}

function RolePermissions({ roleId }: { roleId: string }) {
  const scopes = useLoad<Scope[]>(`roles/${roleId}/scopes`);
  const resources = useLoad<Resource[]>('resources');
  const [resourceId, setResourceId] = useState<string>();
  const available = useLoad<Scope[]>(resourceId ? `resources/${resourceId}/scopes` : undefined);
  const action = useAction();
  const add = (event: Event) => {
    const { scopeId } = formValues(event);
    void action.run(() => api('POST', `roles/${roleId}/scopes`, { scopeIds: [scopeId] }).then(scopes.reload));
  };
  return (
    <section class="card" aria-labelledby="role-permissions">
      <h2 id="role-permissions">{t('resources.permissions')}</h2>
      <Loaded state={scopes}>
        {(items) => (
          <ul>
            {items.map((scope) => (
              <li key={scope.id}>
                <code>{scope.name}</code> {scope.resource && <small>({scope.resource.name})</small>}{' '}
                <ConfirmButton
                  label={t('common.remove')}
                  question={t('roles.confirmRemovePermission', { name: scope.name })}
                  onConfirm={() =>
                    action.run(() => api('DELETE', `roles/${roleId}/scopes/${scope.id}`).then(scopes.reload))
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline" onSubmit={add} aria-label={t('resources.addPermission')}>
        <Field label={t('roles.api')} name="resource">
          {(id) => (
            <select id={id} onChange={(event) => setResourceId(event.currentTarget.value || undefined)}>
              <option value="">{t('roles.chooseApi')}</option>
              {(resources.data ?? []).map((resource) => (
                <option value={resource.id}>{resource.name}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('resources.permission')} name="scopeId">
          {(id) => (
            <select id={id} name="scopeId" required>
              {(available.data ?? []).map((scope) => (
                <option value={scope.id}>{scope.name}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy || !resourceId}>{t('resources.addPermissionButton')}</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}

function RoleHolders({ roleId, kind }: { roleId: string; kind: 'users' | 'applications' }) {
  const holders = useLoad<Holder[]>(`roles/${roleId}/${kind}`);
  const candidates = useLoad<Holder[]>(
    kind === 'users' ? 'users?page_size=100' : 'applications?types=MachineToMachine',
  );
  const action = useAction();
  const label = (holder: Holder) => holder.name ?? holder.username ?? holder.id;
  const add = (event: Event) => {
    const { holderId } = formValues(event);
    const body = kind === 'users' ? { userIds: [holderId] } : { applicationIds: [holderId] };
    void action.run(() => api('POST', `roles/${roleId}/${kind}`, body).then(holders.reload));
  };
  return (
    <section class="card" aria-labelledby="role-holders">
      <h2 id="role-holders">{t(`roles.assigned.${kind}`)}</h2>
      <Loaded state={holders}>
        {(items) => (
          <ul>
            {items.map((holder) => (
              <li key={holder.id}>
                <Link to={`/${kind}/${holder.id}`}>{label(holder)}</Link>{' '}
                <ConfirmButton
                  label={t('common.remove')}
                  question={t('roles.confirmTake', { name: label(holder) })}
                  onConfirm={() =>
                    action.run(() => api('DELETE', `roles/${roleId}/${kind}/${holder.id}`).then(holders.reload))
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline" onSubmit={add} aria-label={t(`roles.assignTo.${kind}`)}>
        <Field label={kind === 'users' ? t('common.user') : t('roles.application')} name="holderId">
          {(id) => (
            <select id={id} name="holderId" required>
              {(candidates.data ?? []).map((holder) => (
                <option value={holder.id}>{label(holder)}</option>
              ))}
            </select>
          )}
        </Field>
        <button disabled={action.busy}>{t('roles.assign')}</button>
      </form>
      <FormError error={action.error} />
    </section>
  );
}
