import type {
  OrganizationRoleListItem,
  OrganizationScope as OrganizationScopeAnswer,
} from '../../../lib/organizations/schemas.ts';
import { api } from '../api.ts';
import { t } from '../i18n/index.ts';
import { ConfirmButton, Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type OrganizationScope = Pick<OrganizationScopeAnswer, 'id' | 'name' | 'description'>;
type OrganizationRole = Pick<OrganizationRoleListItem, 'id' | 'name' | 'description' | 'type' | 'scopes'>;

/** Organization roles and the organization permissions (scopes) they carry, on one page. */
export function OrganizationRolesPage() {
  const roles = useLoad<OrganizationRole[]>('organization-roles');
  const scopes = useLoad<OrganizationScope[]>('organization-scopes');
  const action = useAction();
  const createRole = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const { name, description, type } = formValues(event);
    void action.run(async () => {
      await api('POST', 'organization-roles', { name, description: description || null, type });
      form.reset();
      roles.reload();
    });
  };
  const createScope = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const { name, description } = formValues(event);
    void action.run(async () => {
      await api('POST', 'organization-scopes', { name, description: description || null });
      form.reset();
      scopes.reload();
    });
  };
  const grant = (roleId: string, scopeId: string) =>
    void action.run(() =>
      api('POST', `organization-roles/${roleId}/scopes`, { organizationScopeIds: [scopeId] }).then(roles.reload),
    );
  return (
    <>
      <h1>{t('nav.organizationRoles')}</h1>
      <FormError error={action.error} fields={[]} />
      <Loaded state={roles}>
        {(items) => (
          <table>
            <thead>
              <tr>
                <th>{t('common.role')}</th>
                <th>{t('common.type')}</th>
                <th>{t('resources.permissions')}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((role) => (
                <tr key={role.id}>
                  <td>
                    {role.name}
                    <br />
                    <small>{role.description}</small>
                  </td>
                  <td>{t(`roles.types.${role.type === 'MachineToMachine' ? 'MachineToMachine' : 'User'}`)}</td>
                  <td>
                    {role.scopes.map((scope) => (
                      <span key={scope.id} class="tag">
                        {scope.name}{' '}
                        <button
                          type="button"
                          class="link"
                          aria-label={t('organizationRoles.removeFrom', { permission: scope.name, role: role.name })}
                          onClick={() =>
                            void action.run(() =>
                              api('DELETE', `organization-roles/${role.id}/scopes/${scope.id}`).then(roles.reload),
                            )
                          }
                        >
                          ×
                        </button>
                      </span>
                    ))}
                    <select
                      aria-label={t('organizationRoles.addTo', { role: role.name })}
                      onChange={(event) => event.currentTarget.value && grant(role.id, event.currentTarget.value)}
                    >
                      <option value="">{t('organizationRoles.addPermission')}</option>
                      {(scopes.data ?? [])
                        .filter((scope) => !role.scopes.some((held) => held.id === scope.id))
                        .map((scope) => (
                          <option value={scope.id}>{scope.name}</option>
                        ))}
                    </select>
                  </td>
                  <td>
                    <ConfirmButton
                      label={t('common.delete')}
                      question={t('organizationRoles.confirmDeleteRole', { name: role.name })}
                      onConfirm={() =>
                        action.run(() => api('DELETE', `organization-roles/${role.id}`).then(roles.reload))
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
      <form class="card inline" onSubmit={createRole} aria-label={t('organizationRoles.createRole')}>
        <Field label={t('organizationRoles.roleName')} name="name" required />
        <Field label={t('common.description')} name="description" />
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
      </form>
      <h2>{t('organizationRoles.permissions')}</h2>
      <Loaded state={scopes}>
        {(items) => (
          <ul>
            {items.map((scope) => (
              <li key={scope.id}>
                <code>{scope.name}</code> {scope.description}{' '}
                <ConfirmButton
                  label={t('common.delete')}
                  question={t('organizationRoles.confirmDeletePermission', { name: scope.name })}
                  onConfirm={() =>
                    action.run(() =>
                      api('DELETE', `organization-scopes/${scope.id}`).then(() => {
                        scopes.reload();
                        roles.reload();
                      }),
                    )
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="card inline" onSubmit={createScope} aria-label={t('organizationRoles.createPermission')}>
        <Field label={t('resources.permissionName')} name="name" placeholder="invite:member" required />
        <Field label={t('common.description')} name="description" />
        <button class="primary" disabled={action.busy}>
          {t('organizationRoles.createPermissionButton')}
        </button>
      </form>
    </>
  );
}
