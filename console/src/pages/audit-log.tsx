import { useState } from 'preact/hooks';

import { Field, formatTime, formValues, Loaded, useLoadPage } from '../ui.tsx';

type Entry = { id: string; key: string; createdAt: number; payload: { result?: string; applicationId?: string; userId?: string; error?: unknown; params?: Record<string, unknown> } };

const kinds: Array<[string, string]> = [
  ['', 'All'],
  ['ExchangeTokenBy.TokenExchange', 'Token exchanges'],
  ['Interaction.SignIn.Submit', 'Sign-ins'],
];
const pageSize = 20;

const describeError = (error: unknown) => (typeof error === 'string' ? error : error && typeof error === 'object' ? String((error as { error_description?: string; error?: string }).error_description ?? (error as { error?: string }).error) : '');

/** GET /api/logs, newest first, filtered by kind, user, application and time. */
export function AuditLogPage() {
  const [filter, setFilter] = useState<Record<string, string>>({});
  const [page, setPage] = useState(1);
  const query = new URLSearchParams({ page: String(page), page_size: String(pageSize) });
  for (const [name, value] of Object.entries(filter)) {
    if (value) {
      query.set(name, name === 'start_time' ? String(new Date(value).getTime()) : value);
    }
  }
  const entries = useLoadPage<Entry>(`logs?${query}`);
  const apply = (event: Event) => {
    setFilter(formValues(event));
    setPage(1);
  };
  return (
    <>
      <h1>Audit log</h1>
      <form class="card inline" onSubmit={apply} aria-label="Filter">
        <Field label="Kind" name="logKey">
          {(id) => (
            <select id={id} name="logKey">
              {kinds.map(([value, label]) => <option value={value}>{label}</option>)}
            </select>
          )}
        </Field>
        <Field label="User id" name="userId" />
        <Field label="Application id" name="applicationId" />
        <Field label="Since" name="start_time" type="datetime-local" />
        <button>Filter</button>
      </form>
      <Loaded state={entries}>
        {({ items, total }) => (
          <>
            <p>{total} entr{total === 1 ? 'y' : 'ies'}</p>
            <table>
              <thead><tr><th>Time</th><th>Event</th><th>Result</th><th>User</th><th>Application</th><th>Details</th></tr></thead>
              <tbody>
                {items.map((entry) => (
                  <tr key={entry.id}>
                    <td>{formatTime(entry.createdAt)}</td>
                    <td>{entry.key}</td>
                    <td class={entry.payload.result === 'Success' ? 'ok' : 'bad'}>{entry.payload.result}</td>
                    <td><code>{entry.payload.userId}</code></td>
                    <td><code>{entry.payload.applicationId}</code></td>
                    <td>
                      {describeError(entry.payload.error)}
                      {entry.payload.params?.resource !== undefined && <small> resource {String(entry.payload.params.resource)}</small>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <nav class="pager" aria-label="Pages">
              <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>Newer</button>
              <span>Page {page} of {Math.max(1, Math.ceil(total / pageSize))}</span>
              <button type="button" disabled={page * pageSize >= total} onClick={() => setPage(page + 1)}>Older</button>
            </nav>
          </>
        )}
      </Loaded>
    </>
  );
}
