import type { Resource as ResourceAnswer, Scope as ScopeAnswer } from '../../../lib/resources/schemas.ts';
import { api } from '../api.ts';
import { t } from '../i18n/index.ts';
import { Link, navigate } from '../router.tsx';
import { ConfirmButton, DeleteCard, Field, FormError, formValues, Loaded, useAction, useLoad } from '../ui.tsx';

type Resource = Pick<ResourceAnswer, 'id' | 'name' | 'indicator' | 'accessTokenTtl' | 'isDefault'>;
type Scope = Pick<ScopeAnswer, 'id' | 'name' | 'description'>;

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
      <h1>{t('nav.resources')}</h1>
      <form class="card inline" onSubmit={create} aria-label={t('resources.create')}>
        <Field label={t('common.name')} name="name" error={action.error} required />
        <Field
          label={t('resources.indicator')}
          name="indicator"
          type="url"
          placeholder="https://api.example.com"
          error={action.error}
          required
        />
        <button class="primary" disabled={action.busy}>
          {t('resources.createButton')}
        </button>
        <FormError error={action.error} fields={['name', 'indicator']} />
      </form>
      <Loaded state={list}>
        {(resources) => (
          <table>
            <thead>
              <tr>
                <th>{t('common.name')}</th>
                <th>{t('resources.identifier')}</th>
                <th>{t('resources.tokenTtl')}</th>
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
                  <td>{t('resources.seconds', { count: resource.accessTokenTtl })}</td>
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
            <Link to="/resources">{t('resources.back')}</Link>
          </p>
          <h1>{loaded.name}</h1>
          <p>
            {t('resources.identifierIs')} <code>{loaded.indicator}</code>
          </p>
          {fixed && <p>{t('resources.fixed')}</p>}
          {!fixed && (
            <form class="card" onSubmit={save} aria-label={t('common.settings')}>
              <h2>{t('common.settings')}</h2>
              <Field label={t('common.name')} name="name" defaultValue={loaded.name} error={action.error} required />
              <Field
                label={t('resources.lifetime')}
                name="accessTokenTtl"
                type="number"
                min={1}
                defaultValue={String(loaded.accessTokenTtl)}
                error={action.error}
                required
              />
              <FormError error={action.error} fields={['name', 'accessTokenTtl']} />
              <button class="primary" disabled={action.busy}>
                {t('common.save')}
              </button>
              {action.done && <span role="status"> {t('common.saved')}</span>}
            </form>
          )}
          <Permissions resourceId={id} fixed={fixed} />
          {!fixed && (
            <DeleteCard
              label={t('resources.delete')}
              question={t('resources.confirmDelete', { name: loaded.name })}
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
      <h2 id="permissions">{t('resources.permissions')}</h2>
      <Loaded state={scopes}>
        {(items) => (
          <table>
            <thead>
              <tr>
                <th>{t('resources.permission')}</th>
                <th>{t('common.description')}</th>
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
                        label={t('common.delete')}
                        question={t('resources.confirmDeletePermission', { name: scope.name })}
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
        <form class="inline" onSubmit={add} aria-label={t('resources.addPermission')}>
          <Field
            label={t('resources.permissionName')}
            name="name"
            placeholder="read:orders"
            error={action.error}
            required
          />
          <Field label={t('common.description')} name="description" error={action.error} />
          <button disabled={action.busy}>{t('resources.addPermissionButton')}</button>
        </form>
      )}
      <FormError error={action.error} fields={['name', 'description']} />
    </section>
  );
}
