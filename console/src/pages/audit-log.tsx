import { useState } from 'preact/hooks';

import { Field, formatTime, formValues, Loaded, useLoadPage } from '../ui.tsx';

type Payload = {
  result?: string;
  applicationId?: string;
  userId?: string;
  error?: unknown;
  params?: Record<string, unknown>;
  status?: number;
  method?: string;
  route?: string;
  createdId?: string;
  fields?: string[];
  bodyIds?: Record<string, string | string[]>;
  identifier?: { type: string; value: string };
  ip?: string;
};
type Entry = { id: string; key: string; createdAt: number; payload: Payload; names?: Record<string, string> };

/** What each kind asks GET /api/logs for. */
const kinds: Array<[string, string, Record<string, string>]> = [
  ['all', 'All', {}],
  ['management', 'Management changes', { logKey: 'Management.Write' }],
  ['sign-ins', 'Sign-ins', { logKey: 'Interaction.SignIn.Submit' }],
  ['failed-sign-ins', 'Failed sign-ins and verifications', { logKeyPrefix: 'Interaction.', result: 'Error' }],
  ['account', 'Account API verifications', { logKeyPrefix: 'Account.' }],
  ['exchanges', 'Token exchanges', { logKey: 'ExchangeTokenBy.TokenExchange' }],
];
const pageSize = 20;

function describeError(error: unknown): string {
  if (typeof error === 'string') {
    return error;
  }
  if (!error || typeof error !== 'object') {
    return '';
  }
  const {
    code,
    error: oauthError,
    error_description: description,
  } = error as { code?: string; error?: string; error_description?: string };
  return code ?? description ?? oauthError ?? '';
}

/** An id with its current name beside it, when it still has one. */
function Named({ id, names }: { id: string | undefined; names: Record<string, string> | undefined }) {
  if (!id) {
    return null;
  }
  const name = names?.[id];
  return (
    <span class="named">
      {name && <strong>{name} </strong>}
      <code>{id}</code>
    </span>
  );
}

type Actor = { sub: string; clientId?: string };

/**
 * A token exchange's chain of actors, the current one first: who acts (a user, or an application
 * by client credentials when its sub is its client id) and through which application.
 */
function ActorChain({ chain, names }: { chain: Actor[]; names: Record<string, string> | undefined }) {
  return (
    <div>
      acting for the user:
      <ol class="actor-chain" aria-label="Actor chain, current actor first">
        {chain.map((actor, index) => (
          <li key={index}>
            <Named id={actor.sub} names={names} />
            {actor.clientId && actor.clientId !== actor.sub && (
              <>
                {' '}
                through <Named id={actor.clientId} names={names} />
              </>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}

const isActorChain = (value: unknown): value is Actor[] =>
  Array.isArray(value) &&
  value.every((actor) => typeof actor === 'object' && actor !== null && typeof (actor as Actor).sub === 'string');

const scopeList = (value: unknown) => (Array.isArray(value) ? value.join(' ') || '(none)' : undefined);

function Details({ entry }: { entry: Entry }) {
  const { payload, names } = entry;
  const error = describeError(payload.error);
  return (
    <>
      {payload.route && (
        <div>
          <code>
            {payload.method} {payload.route}
          </code>{' '}
          → {payload.status}
        </div>
      )}
      {payload.route &&
        Object.entries(payload.params ?? {}).map(([name, value]) => (
          <div key={name}>
            {name}: <Named id={String(value)} names={names} />
          </div>
        ))}
      {typeof payload.params?.resource === 'string' && <small>resource {payload.params.resource}</small>}
      {isActorChain(payload.params?.actorChain) && <ActorChain chain={payload.params.actorChain} names={names} />}
      {!payload.route && scopeList(payload.params?.scopesRequested) && (
        <div>
          <small>
            scopes asked {scopeList(payload.params?.scopesRequested)}; issued{' '}
            {scopeList(payload.params?.scopesIssued) ?? '(none)'}
          </small>
        </div>
      )}
      {payload.params?.dpopBound === true && <small> DPoP-bound</small>}
      {payload.createdId && (
        <div>
          created: <Named id={payload.createdId} names={names} />
        </div>
      )}
      {Object.entries(payload.bodyIds ?? {}).map(([name, ids]) => (
        <div key={name}>
          {name}:{' '}
          {[ids].flat().map((id) => (
            <Named key={id} id={id} names={names} />
          ))}
        </div>
      ))}
      {payload.fields && <div>fields: {payload.fields.join(', ')}</div>}
      {payload.identifier && (
        <div>
          {payload.identifier.type}: <code>{payload.identifier.value}</code>
        </div>
      )}
      {error && <div class="bad">{error}</div>}
      {payload.identifier && payload.ip && <small>from {payload.ip}</small>}
    </>
  );
}

/** GET /api/logs, newest first, filtered by kind, result, user, application, target and time; ids shown with their names. */
export function AuditLogPage() {
  const [filter, setFilter] = useState<Partial<Record<string, string>>>({});
  const [page, setPage] = useState(1);
  const query = new URLSearchParams({ page: String(page), page_size: String(pageSize) });
  for (const [name, value] of Object.entries(filter)) {
    if (!value) {
      continue;
    }
    if (name === 'kind') {
      for (const [param, wanted] of Object.entries(kinds.find(([kind]) => kind === value)?.[2] ?? {})) {
        query.set(param, wanted);
      }
    } else {
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
        <Field label="Kind" name="kind">
          {(id) => (
            <select id={id} name="kind">
              {kinds.map(([value, label]) => (
                <option value={value}>{label}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Result" name="result">
          {(id) => (
            <select id={id} name="result">
              <option value="">Any</option>
              <option value="Success">Success</option>
              <option value="Error">Error</option>
            </select>
          )}
        </Field>
        <Field label="User id" name="userId" />
        <Field label="Application id" name="applicationId" />
        <Field label="Target id" name="targetId" />
        <Field label="Since" name="start_time" type="datetime-local" />
        <button>Filter</button>
      </form>
      <Loaded state={entries}>
        {({ items, total }) => (
          <>
            <p>
              {total} entr{total === 1 ? 'y' : 'ies'}
            </p>
            <table>
              <thead>
                <tr>
                  <th>Time</th>
                  <th>Event</th>
                  <th>Result</th>
                  <th>User</th>
                  <th>Application</th>
                  <th>Details</th>
                </tr>
              </thead>
              <tbody>
                {items.map((entry) => (
                  <tr key={entry.id}>
                    <td>{formatTime(entry.createdAt)}</td>
                    <td>{entry.key}</td>
                    <td class={entry.payload.result === 'Success' ? 'ok' : 'bad'}>{entry.payload.result}</td>
                    <td>
                      <Named id={entry.payload.userId} names={entry.names} />
                    </td>
                    <td>
                      <Named id={entry.payload.applicationId} names={entry.names} />
                    </td>
                    <td>
                      <Details entry={entry} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <nav class="pager" aria-label="Pages">
              <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
                Newer
              </button>
              <span>
                Page {page} of {Math.max(1, Math.ceil(total / pageSize))}
              </span>
              <button type="button" disabled={page * pageSize >= total} onClick={() => setPage(page + 1)}>
                Older
              </button>
            </nav>
          </>
        )}
      </Loaded>
    </>
  );
}
