import { api } from '../api.ts';
import { ConfirmButton, Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type OrganizationScope = { id: string; name: string; description: string | null };
type OrganizationRole = {
  id: string;
  name: string;
  description: string | null;
  type: string;
  scopes: Array<{ id: string; name: string }>;
};

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
      <h1>Organization roles</h1>
      <FormError error={action.error} fields={[]} />
      <Loaded state={roles}>
        {(items) => (
          <table>
            <thead>
              <tr>
                <th>Role</th>
                <th>Type</th>
                <th>Permissions</th>
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
                  <td>{role.type}</td>
                  <td>
                    {role.scopes.map((scope) => (
                      <span key={scope.id} class="tag">
                        {scope.name}{' '}
                        <button
                          type="button"
                          class="link"
                          aria-label={`Remove ${scope.name} from ${role.name}`}
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
                      aria-label={`Add a permission to ${role.name}`}
                      onChange={(event) => event.currentTarget.value && grant(role.id, event.currentTarget.value)}
                    >
                      <option value="">Add permission…</option>
                      {(scopes.data ?? [])
                        .filter((scope) => !role.scopes.some((held) => held.id === scope.id))
                        .map((scope) => (
                          <option value={scope.id}>{scope.name}</option>
                        ))}
                    </select>
                  </td>
                  <td>
                    <ConfirmButton
                      label="Delete"
                      question={`Delete the organization role ${role.name}?`}
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
      <form class="card inline" onSubmit={createRole} aria-label="Create an organization role">
        <Field label="Role name" name="name" required />
        <Field label="Description" name="description" />
        <Field label="Type" name="type">
          {(id) => (
            <select id={id} name="type">
              <option value="User">User</option>
              <option value="MachineToMachine">Machine-to-machine</option>
            </select>
          )}
        </Field>
        <button class="primary" disabled={action.busy}>
          Create role
        </button>
      </form>
      <h2>Organization permissions</h2>
      <Loaded state={scopes}>
        {(items) => (
          <ul>
            {items.map((scope) => (
              <li key={scope.id}>
                <code>{scope.name}</code> {scope.description}{' '}
                <ConfirmButton
                  label="Delete"
                  question={`Delete the organization permission ${scope.name}?`}
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
      <form class="card inline" onSubmit={createScope} aria-label="Create an organization permission">
        <Field label="Permission name" name="name" placeholder="invite:member" required />
        <Field label="Description" name="description" />
        <button class="primary" disabled={action.busy}>
          Create permission
        </button>
      </form>
    </>
  );
}
