import { useState } from 'preact/hooks';

import { hookEventGroups } from '../../../lib/hooks/events.ts';
import type { HookLog, HookWithStats } from '../../../lib/hooks/schemas.ts';
import { api, type ApiError, errorText } from '../api.ts';
import { formatTime } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { Rich } from '../i18n/rich.tsx';
import { Link, navigate } from '../router.tsx';
import { ConfirmButton, DeleteCard, Field, FormError, formValues, Loaded, Switch, useAction, useLoad } from '../ui.tsx';
import { Deliveries, RecoverReplay } from './webhook-deliveries.tsx';

type Hook = Pick<
  HookWithStats,
  'id' | 'name' | 'events' | 'config' | 'signingKey' | 'enabled' | 'disabledReason' | 'createdAt' | 'executionStats'
>;

/** The specification's three groups of events, headed as the specification heads them. */
const eventGroups = Object.entries(hookEventGroups) as Array<[keyof typeof hookEventGroups, readonly string[]]>;

/** Headers typed as `Name: value` lines. */
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    }
  }
  return headers;
}

const headerText = (headers: Record<string, string> = {}) =>
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');

function EventPicker({ selected }: { selected: string[] }) {
  return (
    <div class="events">
      {eventGroups.map(([group, events]) => (
        <fieldset key={group}>
          <legend>{t(`webhooks.groups.${group}`)}</legend>
          {events.map((event) => (
            <label key={event} class="check">
              <input type="checkbox" name="events" value={event} defaultChecked={selected.includes(event)} /> {event}
            </label>
          ))}
        </fieldset>
      ))}
    </div>
  );
}

const checkedEvents = (form: HTMLFormElement) => new FormData(form).getAll('events').map(String);

function HookForm({
  hook,
  onSubmit,
  busy,
  error,
  submitLabel,
}: {
  hook?: Hook;
  onSubmit: (body: Record<string, unknown>) => void;
  busy: boolean;
  error?: ApiError;
  submitLabel: string;
}) {
  const submit = (event: Event) => {
    const form = event.currentTarget as HTMLFormElement;
    const values = formValues(event);
    onSubmit({
      name: values.name,
      events: checkedEvents(form),
      config: { url: values.url, headers: parseHeaders(values.headers ?? '') },
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label={submitLabel}>
      <Field label={t('common.name')} name="name" defaultValue={hook?.name ?? ''} error={error} required />
      <Field
        label={t('webhooks.url')}
        name="url"
        type="url"
        defaultValue={hook?.config.url ?? ''}
        error={error}
        required
        placeholder="https://example.com/webhooks"
      />
      <Field label={t('webhooks.headers')} name="headers">
        {(id) => <textarea id={id} name="headers" rows={2} defaultValue={headerText(hook?.config.headers)} />}
      </Field>
      <EventPicker selected={hook?.events ?? []} />
      <FormError error={error} fields={['name', 'url']} />
      <button class="primary" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}

export function WebhooksPage() {
  const list = useLoad<Hook[]>('hooks?includeExecutionStats=true');
  const action = useAction();
  const create = (body: Record<string, unknown>) =>
    void action.run(async () => {
      const created = await api<Hook>('POST', 'hooks', body);
      navigate(`/webhooks/${created.id}`);
    });
  return (
    <>
      <h1>{t('nav.webhooks')}</h1>
      <Loaded state={list}>
        {(hooks) => (
          <table>
            <thead>
              <tr>
                <th>{t('common.name')}</th>
                <th>{t('webhooks.endpoint')}</th>
                <th>{t('webhooks.events')}</th>
                <th>{t('webhooks.last24h')}</th>
              </tr>
            </thead>
            <tbody>
              {hooks.map((hook) => (
                <tr key={hook.id}>
                  <td>
                    <Link to={`/webhooks/${hook.id}`}>{hook.name}</Link>
                    {hook.enabled ? '' : ` ${t('webhooks.disabled')}`}
                  </td>
                  <td>
                    <code>{hook.config.url}</code>
                  </td>
                  <td>{hook.events.length}</td>
                  <td>
                    {hook.executionStats
                      ? t('webhooks.succeeded', {
                          success: hook.executionStats.successCount,
                          count: hook.executionStats.requestCount,
                        })
                      : t('common.none')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
      <h2>{t('webhooks.create')}</h2>
      <HookForm onSubmit={create} busy={action.busy} error={action.error} submitLabel={t('webhooks.createButton')} />
    </>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const hook = useLoad<Hook>(`hooks/${id}`);
  const action = useAction();
  const save = (body: Record<string, unknown>) => {
    void action.run(async () => {
      await api('PATCH', `hooks/${id}`, body);
      hook.reload();
    });
  };
  return (
    <Loaded state={hook}>
      {(loaded) => (
        <>
          <p>
            <Link to="/webhooks">{t('webhooks.back')}</Link>
          </p>
          <h1>{loaded.name}</h1>
          {loaded.disabledReason && (
            <div role="alert" class="notice warning">
              <p>
                <strong>{t('webhooks.disabledByService')}</strong> {loaded.disabledReason}
              </p>
              <p>{t('webhooks.disabledHelp')}</p>
            </div>
          )}
          <section class="card">
            <Switch
              label={t('webhooks.enabled')}
              checked={loaded.enabled}
              onChange={(enabled) => action.run(() => api('PATCH', `hooks/${id}`, { enabled }).then(hook.reload))}
            />
          </section>
          <HookForm
            hook={loaded}
            onSubmit={save}
            busy={action.busy}
            error={action.error}
            submitLabel={t('webhooks.save')}
          />
          {action.done && <p role="status">{t('common.saved')}</p>}
          <SigningKey hook={loaded} onRotated={hook.reload} />
          <SendTest hook={loaded} />
          <Deliveries hookId={id} />
          <RecoverReplay hookId={id} />
          <Attempts hookId={id} />
          <DeleteCard
            label={t('webhooks.delete')}
            question={t('webhooks.confirmDelete', { name: loaded.name })}
            path={`hooks/${id}`}
            back="/webhooks"
          />
        </>
      )}
    </Loaded>
  );
}

function SigningKey({ hook, onRotated }: { hook: Hook; onRotated: () => void }) {
  const [shown, setShown] = useState(false);
  const action = useAction();
  return (
    <section class="card" aria-labelledby="signing-key">
      <h2 id="signing-key">{t('webhooks.signingKey')}</h2>
      <p>
        <Rich text={t('webhooks.signingKeyHelp')} />
      </p>
      <p>
        <code data-testid="signing-key">{shown ? hook.signingKey : '••••••••••••••••'}</code>{' '}
        <button type="button" onClick={() => setShown(!shown)}>
          {shown ? t('webhooks.hideKey') : t('webhooks.revealKey')}
        </button>{' '}
        <ConfirmButton
          label={t('webhooks.rotateKey')}
          class=""
          question={t('webhooks.confirmRotate')}
          onConfirm={() => action.run(() => api('PATCH', `hooks/${hook.id}/signing-key`).then(onRotated))}
        />
      </p>
      <FormError error={action.error} />
    </section>
  );
}

function SendTest({ hook }: { hook: Hook }) {
  const action = useAction();
  const [result, setResult] = useState<string>();
  const send = () => {
    setResult(undefined);
    void action.run(async () => {
      await api('POST', `hooks/${hook.id}/test`, { events: hook.events, config: hook.config });
      setResult(t('webhooks.testSent', { count: hook.events.length }));
    });
  };
  return (
    <section class="card" aria-labelledby="send-test">
      <h2 id="send-test">{t('webhooks.sendTest')}</h2>
      <p>{t('webhooks.sendTestHelp')}</p>
      <button type="button" onClick={send} disabled={action.busy}>
        {t('webhooks.sendTestButton')}
      </button>
      {result && <p role="status">{result}</p>}
      {action.error && (
        <p class="error" role="alert">
          {errorText(action.error)}
          {(action.error.data as { responseStatus?: number } | undefined)?.responseStatus !== undefined &&
            ` ${t('webhooks.responseStatus', { status: (action.error.data as { responseStatus: number }).responseStatus })}`}
        </p>
      )}
    </section>
  );
}

/** Every attempt of the last 24 hours (Logto's recent logs); re-sending is offered on the deliveries. */
function Attempts({ hookId }: { hookId: string }) {
  const attempts = useLoad<HookLog[]>(`hooks/${hookId}/recent-logs?page_size=20`);
  return (
    <section class="card" aria-labelledby="attempts">
      <h2 id="attempts">{t('webhooks.attempts')}</h2>
      <button type="button" onClick={attempts.reload}>
        {t('webhooks.refresh')}
      </button>
      <Loaded state={attempts}>
        {(items) =>
          items.length === 0 ? (
            <p>{t('webhooks.noAttempts')}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>{t('webhooks.time')}</th>
                  <th>{t('webhooks.event')}</th>
                  <th>{t('webhooks.result')}</th>
                  <th>{t('users.status')}</th>
                  <th>{t('webhooks.duration')}</th>
                  <th>{t('webhooks.response')}</th>
                </tr>
              </thead>
              <tbody>
                {items.map((attempt) => (
                  <tr key={attempt.id}>
                    <td>{formatTime(attempt.createdAt)}</td>
                    <td>
                      {attempt.key.replace(/^TriggerHook\./, '')}{' '}
                      <small>{t('webhooks.attempt', { number: attempt.payload.attempt })}</small>
                    </td>
                    <td class={attempt.payload.result === 'Success' ? 'ok' : 'bad'}>
                      {t(`webhooks.results.${attempt.payload.result}`)}
                    </td>
                    <td>{attempt.payload.response.statusCode ?? t('common.none')}</td>
                    <td>{t('dashboard.milliseconds', { count: attempt.payload.durationMs })}</td>
                    <td>
                      <code class="clip">{attempt.payload.response.body ?? attempt.payload.error ?? ''}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}
