import { useState } from 'preact/hooks';

import { type ApiError, toApiError } from '../api.ts';
import { enteredInstant, formatTime } from '../i18n/dates.ts';
import { t } from '../i18n/index.ts';
import { DateTimeField, Field, formValues, Loaded, useLoadPage } from '../ui.tsx';

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

/** What each kind asks GET /api/logs for (its label is `auditLog.kinds.<kind>`). */
const kinds = {
  all: {},
  management: { logKey: 'Management.Write' },
  signIns: { logKey: 'Interaction.SignIn.Submit' },
  failedSignIns: { logKeyPrefix: 'Interaction.', result: 'Error' },
  account: { logKeyPrefix: 'Account.' },
  exchanges: { logKey: 'ExchangeTokenBy.TokenExchange' },
} satisfies Record<string, Record<string, string>>;
type Kind = keyof typeof kinds;
const isKind = (value: string): value is Kind => Object.hasOwn(kinds, value);
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
      {t('auditLog.actingFor')}
      <ol class="actor-chain" aria-label={t('auditLog.actorChain')}>
        {chain.map((actor, index) => (
          <li key={index}>
            <Named id={actor.sub} names={names} />
            {actor.clientId && actor.clientId !== actor.sub && (
              <>
                {' '}
                {t('auditLog.through')} <Named id={actor.clientId} names={names} />
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

const scopeList = (value: unknown) => (Array.isArray(value) ? value.join(' ') || t('auditLog.noScopes') : undefined);

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
      {typeof payload.params?.resource === 'string' && (
        <small>{t('auditLog.resource', { resource: payload.params.resource })}</small>
      )}
      {isActorChain(payload.params?.actorChain) && <ActorChain chain={payload.params.actorChain} names={names} />}
      {!payload.route && scopeList(payload.params?.scopesRequested) && (
        <div>
          <small>
            {t('auditLog.scopes', {
              asked: scopeList(payload.params?.scopesRequested),
              issued: scopeList(payload.params?.scopesIssued) ?? t('auditLog.noScopes'),
            })}
          </small>
        </div>
      )}
      {payload.params?.dpopBound === true && <small> {t('auditLog.dpopBound')}</small>}
      {payload.createdId && (
        <div>
          {t('auditLog.created')} <Named id={payload.createdId} names={names} />
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
      {payload.fields && <div>{t('auditLog.fields', { fields: payload.fields.join(', ') })}</div>}
      {payload.identifier && (
        <div>
          {payload.identifier.type}: <code>{payload.identifier.value}</code>
        </div>
      )}
      {error && <div class="bad">{error}</div>}
      {payload.identifier && payload.ip && <small>{t('auditLog.from', { ip: payload.ip })}</small>}
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
      for (const [param, wanted] of Object.entries<string>(isKind(value) ? kinds[value] : {})) {
        query.set(param, wanted);
      }
    } else {
      query.set(name, value);
    }
  }
  const entries = useLoadPage<Entry>(`logs?${query}`);
  const [error, setError] = useState<ApiError>();
  const apply = (event: Event) => {
    const values = formValues(event);
    try {
      const since = enteredInstant(values, 'start_time');
      setFilter({ ...values, start_time: since === undefined ? undefined : String(since) });
      setError(undefined);
      setPage(1);
    } catch (caught) {
      setError(toApiError(caught));
    }
  };
  return (
    <>
      <h1>{t('nav.auditLog')}</h1>
      <form class="card inline" onSubmit={apply} aria-label={t('auditLog.filter')}>
        <Field label={t('auditLog.kind')} name="kind">
          {(id) => (
            <select id={id} name="kind">
              {Object.keys(kinds).map((kind) => (
                <option value={kind}>{t(`auditLog.kinds.${kind as Kind}`)}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label={t('webhooks.result')} name="result">
          {(id) => (
            <select id={id} name="result">
              <option value="">{t('auditLog.anyResult')}</option>
              <option value="Success">{t('webhooks.results.Success')}</option>
              <option value="Error">{t('webhooks.results.Error')}</option>
            </select>
          )}
        </Field>
        <Field label={t('auditLog.userId')} name="userId" />
        <Field label={t('applications.applicationId')} name="applicationId" />
        <Field label={t('auditLog.targetId')} name="targetId" />
        <DateTimeField label={t('deliveries.since')} name="start_time" error={error} />
        <button>{t('auditLog.filter')}</button>
      </form>
      <Loaded state={entries}>
        {({ items, total }) => (
          <>
            <p>{t('auditLog.entries', { count: total })}</p>
            <table>
              <thead>
                <tr>
                  <th>{t('webhooks.time')}</th>
                  <th>{t('webhooks.event')}</th>
                  <th>{t('webhooks.result')}</th>
                  <th>{t('common.user')}</th>
                  <th>{t('roles.application')}</th>
                  <th>{t('auditLog.details')}</th>
                </tr>
              </thead>
              <tbody>
                {items.map((entry) => (
                  <tr key={entry.id}>
                    <td>{formatTime(entry.createdAt)}</td>
                    <td>{entry.key}</td>
                    <td class={entry.payload.result === 'Success' ? 'ok' : 'bad'}>
                      {entry.payload.result === 'Success' || entry.payload.result === 'Error'
                        ? t(`webhooks.results.${entry.payload.result}`)
                        : entry.payload.result}
                    </td>
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
            <nav class="pager" aria-label={t('auditLog.pages')}>
              <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
                {t('auditLog.newer')}
              </button>
              <span>{t('auditLog.page', { page, pages: Math.max(1, Math.ceil(total / pageSize)) })}</span>
              <button type="button" disabled={page * pageSize >= total} onClick={() => setPage(page + 1)}>
                {t('auditLog.older')}
              </button>
            </nav>
          </>
        )}
      </Loaded>
    </>
  );
}
