import { api } from '../api.ts';
import { Link, navigate } from '../router.tsx';
import { ConfirmButton, DeleteCard, Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type Resource = { id: string; name: string; indicator: string; accessTokenTtl: number; isDefault: boolean };
type Scope = { id: string; name: string; description: string | null };

const managementApiId = 'management-api';

export function ResourcesPage() {
  const list = useLoad<Resource[]>('resources');
  const action = useAction();
  const create = (event: Event) => {
    const { name, indicator } = formValues(event);
    void action.run(async () => {
      const created = await api<Resource>('POST', 'resources', { name, indicator });
      navigate(`/resources/${created.id}`);
    });
  };
  return (
    <>
      <h1>API resources</h1>
      <form class="card inline" onSubmit={create} aria-label="Create an API resource">
        <Field label="Name" name="name" error={action.error} required />
        <Field
          label="Identifier (indicator)"
          name="indicator"
          type="url"
          placeholder="https://api.example.com"
          error={action.error}
          required
        />
        <button class="primary" disabled={action.busy}>
          Create API
        </button>
        <FormError error={action.error} fields={['name', 'indicator']} />
      </form>
      <Loaded state={list}>
        {(resources) => (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Identifier</th>
                <th>Token TTL</th>
              </tr>
            </thead>
            <tbody>
              {resources.map((resource) => (
                <tr key={resource.id}>
                  <td>
                    <Link to={`/resources/${resource.id}`}>{resource.name}</Link>
                  </td>
                  <td>
                    <code>{resource.indicator}</code>
                  </td>
                  <td>{resource.accessTokenTtl} s</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  );
}

export function ResourcePage({ id }: { id: string }) {
  const resource = useLoad<Resource>(`resources/${id}`);
  const action = useAction();
  const save = (event: Event) => {
    const { name, accessTokenTtl } = formValues(event);
    void action.run(async () => {
      await api('PATCH', `resources/${id}`, { name, accessTokenTtl: Number(accessTokenTtl) });
      resource.reload();
    });
  };
  const fixed = id === managementApiId;
  return (
    <Loaded state={resource}>
      {(loaded) => (
        <>
          <p>
            <Link to="/resources">← API resources</Link>
          </p>
          <h1>{loaded.name}</h1>
          <p>
            Identifier: <code>{loaded.indicator}</code>
          </p>
          {fixed && <p>The management API belongs to the service: it cannot be changed.</p>}
          {!fixed && (
            <form class="card" onSubmit={save} aria-label="Settings">
              <h2>Settings</h2>
              <Field label="Name" name="name" defaultValue={loaded.name} error={action.error} required />
              <Field
                label="Access token lifetime (seconds)"
                name="accessTokenTtl"
                type="number"
                min={1}
                defaultValue={String(loaded.accessTokenTtl)}
                error={action.error}
                required
              />
              <FormError error={action.error} fields={['name', 'accessTokenTtl']} />
              <button class="primary" disabled={action.busy}>
                Save
              </button>
              {action.done && <span role="status"> Saved.</span>}
            </form>
          )}
          <Permissions resourceId={id} fixed={fixed} />
          {!fixed && (
            <DeleteCard
              label="Delete API"
              question={`Delete the API ${loaded.name} and its permissions?`}
              path={`resources/${id}`}
              back="/resources"
            />
          )}
        </>
      )}
    </Loaded>
  );
}

function Permissions({ resourceId, fixed }: { resourceId: string; fixed: boolean }) {
  const scopes = useLoad<Scope[]>(`resources/${resourceId}/scopes`);
  const action = useAction();
  const add = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const { name, description } = formValues(event);
    void action.run(async () => {
      await api('POST', `resources/${resourceId}/scopes`, { name, description: description || undefined });
      form.reset();
      scopes.reload();
    });
  };
  return (
    <section class="card" aria-labelledby="permissions">
      <h2 id="permissions">Permissions</h2>
      <Loaded state={scopes}>
        {(items) => (
          <table>
            <thead>
              <tr>
                <th>Permission</th>
                <th>Description</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((scope) => (
                <tr key={scope.id}>
                  <td>
                    <code>{scope.name}</code>
                  </td>
                  <td>{scope.description}</td>
                  <td>
                    {!fixed && (
                      <ConfirmButton
                        label="Delete"
                        question={`Delete the permission ${scope.name}? Roles lose it.`}
                        onConfirm={() =>
                          action.run(() =>
                            api('DELETE', `resources/${resourceId}/scopes/${scope.id}`).then(scopes.reload),
                          )
                        }
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
      {!fixed && (
        <form class="inline" onSubmit={add} aria-label="Add a permission">
          <Field label="Permission name" name="name" placeholder="read:orders" error={action.error} required />
          <Field label="Description" name="description" error={action.error} />
          <button disabled={action.busy}>Add permission</button>
        </form>
      )}
      <FormError error={action.error} fields={['name', 'description']} />
    </section>
  );
}
