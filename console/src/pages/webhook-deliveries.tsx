import { useEffect, useState } from 'preact/hooks';

import { api } from '../api.ts';
import { enteredInstant, formatTime } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { DateTimeField, FormError, formValues, Loaded, useAction, useLoad, useLoadPage } from '../ui.tsx';

type Delivery = {
  id: string;
  event: string;
  status: 'pending' | 'delivering' | 'succeeded' | 'failed';
  attempts: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  createdAt: number;
};
type Job = {
  id: string;
  kind: 'recover' | 'replay';
  status: 'running' | 'done' | 'failed';
  total: number;
  done: number;
};

/** Where a delivery stands: a pending one says when it is tried next. */
const standing = (delivery: Delivery) =>
  delivery.status === 'pending' && delivery.nextAttemptAt !== null
    ? t('deliveries.nextTry', { time: formatTime(delivery.nextAttemptAt) })
    : t(`deliveries.statuses.${delivery.status}`);

/** The hook's deliveries, newest first; a failed one can be re-sent (with its webhook-id). */
export function Deliveries({ hookId }: { hookId: string }) {
  const deliveries = useLoadPage<Delivery>(`hooks/${hookId}/deliveries?page_size=20`);
  const action = useAction();
  const resend = (id: string) =>
    void action.run(() => api('POST', `hooks/${hookId}/deliveries/${id}/resend`).then(deliveries.reload));
  return (
    <section class="card" aria-labelledby="deliveries">
      <h2 id="deliveries">{t('deliveries.heading')}</h2>
      <button type="button" onClick={deliveries.reload}>
        {t('webhooks.refresh')}
      </button>
      <FormError error={action.error} />
      <Loaded state={deliveries}>
        {({ items }) =>
          items.length === 0 ? (
            <p>{t('deliveries.none')}</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>{t('webhooks.time')}</th>
                  <th>{t('webhooks.event')}</th>
                  <th>{t('users.status')}</th>
                  <th>{t('deliveries.attempts')}</th>
                  <th>{t('deliveries.lastError')}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {items.map((delivery) => (
                  <tr key={delivery.id}>
                    <td>{formatTime(delivery.createdAt)}</td>
                    <td>
                      {delivery.event} <small>{delivery.id}</small>
                    </td>
                    <td class={delivery.status === 'succeeded' ? 'ok' : delivery.status === 'failed' ? 'bad' : ''}>
                      {standing(delivery)}
                    </td>
                    <td>{delivery.attempts}</td>
                    <td>
                      <code class="clip">{delivery.lastError ?? ''}</code>
                    </td>
                    <td>
                      {delivery.status === 'failed' && (
                        <button type="button" onClick={() => resend(delivery.id)} disabled={action.busy}>
                          {t('deliveries.resend')}
                        </button>
                      )}
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

/** A job's progress, read again every second while it runs. */
function JobProgress({ hookId, jobId }: { hookId: string; jobId: string }) {
  const job = useLoad<Job>(`hooks/${hookId}/jobs/${jobId}`);
  const running = job.data?.status === 'running';
  const { reload } = job;
  useEffect(() => {
    if (!running) {
      return;
    }
    const timer = setTimeout(reload, 1000);
    return () => clearTimeout(timer);
  }, [running, job.data, reload]);
  return (
    <Loaded state={job}>
      {(loaded) => (
        <p role="status">
          {t('deliveries.progress', {
            kind: t(`deliveries.kinds.${loaded.kind}`),
            status: t(`deliveries.jobStatuses.${loaded.status}`),
            done: loaded.done,
            total: loaded.total,
          })}{' '}
          <progress max={Math.max(loaded.total, loaded.done, 1)} value={loaded.done} />
        </p>
      )}
    </Loaded>
  );
}

/** Recover (re-queue the failed deliveries) or replay (send every logged event again) since a time. */
export function RecoverReplay({ hookId }: { hookId: string }) {
  const action = useAction();
  const [jobId, setJobId] = useState<string>();
  const start = (event: Event) => {
    const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
    const kind = submitter?.value === 'replay' ? 'replay' : 'recover';
    const values = formValues(event);
    void action.run(async () => {
      // The API takes instants; what was typed is local time. No "until": up to now.
      const [since, until] = [enteredInstant(values, 'since'), enteredInstant(values, 'until')];
      const job = await api<{ id: string }>('POST', `hooks/${hookId}/${kind}`, {
        since: since === undefined ? undefined : new Date(since).toISOString(),
        until: until === undefined ? undefined : new Date(until).toISOString(),
      });
      setJobId(job.id);
    });
  };
  return (
    <form class="card" aria-labelledby="recover" onSubmit={start}>
      <h2 id="recover">{t('deliveries.recoverReplay')}</h2>
      <p>{t('deliveries.recoverReplayHelp')}</p>
      <DateTimeField label={t('deliveries.since')} name="since" error={action.error} required />
      <DateTimeField label={t('deliveries.until')} name="until" error={action.error} />
      <FormError error={action.error} fields={['since', 'until']} />
      <button class="primary" name="kind" value="recover" disabled={action.busy}>
        {t('deliveries.recover')}
      </button>{' '}
      <button name="kind" value="replay" disabled={action.busy}>
        {t('deliveries.replay')}
      </button>
      {jobId && <JobProgress key={jobId} hookId={hookId} jobId={jobId} />}
    </form>
  );
}
