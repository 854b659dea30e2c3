import { useEffect, useState } from 'preact/hooks';

import { api } from '../api.ts';
import { Field, FormError, formatTime, formValues, Loaded, useAction, useLoad, useLoadPage } from '../ui.tsx';

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
    ? `pending, next try ${formatTime(delivery.nextAttemptAt)}`
    : delivery.status;

/** The hook's deliveries, newest first; a failed one can be re-sent (with its webhook-id). */
export function Deliveries({ hookId }: { hookId: string }) {
  const deliveries = useLoadPage<Delivery>(`hooks/${hookId}/deliveries?page_size=20`);
  const action = useAction();
  const resend = (id: string) =>
    void action.run(() => api('POST', `hooks/${hookId}/deliveries/${id}/resend`).then(deliveries.reload));
  return (
    <section class="card" aria-labelledby="deliveries">
      <h2 id="deliveries">Deliveries</h2>
      <button type="button" onClick={deliveries.reload}>
        Refresh
      </button>
      <FormError error={action.error} />
      <Loaded state={deliveries}>
        {({ items }) =>
          items.length === 0 ? (
            <p>No delivery kept (they are kept 14 days).</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Event</th>
                  <th>Status</th>
                  <th>Attempts</th>
                  <th>Last error</th>
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
                          Re-send
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
          {loaded.kind === 'recover' ? 'Recover' : 'Replay'}: {loaded.status}, {loaded.done} of {loaded.total}{' '}
          <progress max={Math.max(loaded.total, loaded.done, 1)} value={loaded.done} />
        </p>
      )}
    </Loaded>
  );
}

/** `datetime-local` gives local time without a zone: the API takes an instant. */
const instant = (local: string | undefined) => (local ? new Date(local).toISOString() : undefined);

/** Recover (re-queue the failed deliveries) or replay (send every logged event again) since a time. */
export function RecoverReplay({ hookId }: { hookId: string }) {
  const action = useAction();
  const [jobId, setJobId] = useState<string>();
  const start = (event: Event) => {
    const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
    const kind = submitter?.value === 'replay' ? 'replay' : 'recover';
    const values = formValues(event);
    void action.run(async () => {
      const job = await api<{ id: string }>('POST', `hooks/${hookId}/${kind}`, {
        since: instant(values.since),
        until: instant(values.until),
      });
      setJobId(job.id);
    });
  };
  return (
    <form class="card" aria-labelledby="recover" onSubmit={start}>
      <h2 id="recover">Recover and replay</h2>
      <p>
        Recover queues again every failed delivery since the time given (same webhook-id). Replay sends again every
        event since then that this webhook subscribes to, delivered or not, as new deliveries.
      </p>
      <Field label="Since" name="since" type="datetime-local" error={action.error} required />
      <Field label="Until (empty: now)" name="until" type="datetime-local" error={action.error} />
      <FormError error={action.error} fields={['since', 'until']} />
      <button class="primary" name="kind" value="recover" disabled={action.busy}>
        Recover failed deliveries
      </button>{' '}
      <button name="kind" value="replay" disabled={action.busy}>
        Replay events
      </button>
      {jobId && <JobProgress key={jobId} hookId={hookId} jobId={jobId} />}
    </form>
  );
}
