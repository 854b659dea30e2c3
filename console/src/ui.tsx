import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';

import { api, ApiError, apiPage, errorText, toApiError } from './api.ts';
import { entryExample } from './i18n/dates.ts';
import { t } from './i18n/index.ts';
import { navigate } from './router.tsx';

/** Loads what `load` answers for `key` (a management API path); `reload` after a change. */
function useLoader<T>(key: string | undefined, load: (key: string) => Promise<T>) {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (key === undefined) {
      return;
    }
    let live = true;
    setState((current) => ({ ...current, loading: true }));
    load(key).then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error: toApiError(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [key, version]);
  const reload = useCallback(() => setVersion((value) => value + 1), []);
  return { ...state, reload };
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the JSON shape it reads, as with api<T>; the service's schemas check what it answers
export const useLoad = <T,>(path: string | undefined) => useLoader(path, (key) => api<T>('GET', key));

/** A paged list with its `Total-Number`. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the JSON shape it reads, as with api<T>; the service's schemas check what it answers
export const useLoadPage = <T,>(path: string | undefined) => useLoader(path, (key) => apiPage<T>(key));

/** Runs a change against the API and keeps its error for the form to show; `done` after a success. */
export function useAction() {
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    setDone(false);
    try {
      await action();
      setDone(true);
      return true;
    } catch (caught) {
      setError(toApiError(caught));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, error, busy, done };
}

type FieldProps = {
  label: string;
  name: string;
  error?: ApiError;
  hint?: string;
  children?: (id: string) => ComponentChildren;
  type?: 'text' | 'email' | 'password' | 'url' | 'tel' | 'number' | 'search';
  defaultValue?: string;
  placeholder?: string;
  required?: boolean;
  autocomplete?: string;
  min?: number;
  max?: number;
};

/**
 * A labelled input, or the control `children` makes with the given id; an API error about this
 * field is said under it and marks it invalid.
 */
export function Field({ label, name, error, hint, children, type = 'text', ...input }: FieldProps) {
  const id = useId();
  const message = error?.field === name ? errorText(error) : undefined;
  const note = message ? `${id}-error` : hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children ? (
        children(id)
      ) : (
        // Preact types `<input>` per `type` value; this one takes only attributes every text-like type has.
        <input
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc -p console needs it (without it: TS2322); the rule misreads the attribute's contextual type
          type={type as 'text'}
          id={id}
          name={name}
          aria-invalid={message ? 'true' : undefined}
          aria-describedby={note}
          {...input}
        />
      )}
      {hint && !message && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {message && (
        <small id={`${id}-error`} class="error" role="alert">
          {message}
        </small>
      )}
    </div>
  );
}

/** The error of a form that no field of it claims (`fields` are the form's field names). */
export function FormError({ error, fields = [] }: { error?: ApiError; fields?: string[] }) {
  if (!error || (error.field && fields.includes(error.field))) {
    return null;
  }
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

/**
 * A button that asks first: a modal dialog (Escape or "Cancel" closes it) names what will go.
 */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  class: className = 'danger',
}: {
  label: string;
  question: string;
  onConfirm: () => unknown;
  class?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button type="button" class={className} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-label={question}>
        <p>{question}</p>
        <div class="actions">
          <button
            type="button"
            class="danger"
            onClick={() => {
              dialog.current?.close();
              void onConfirm();
            }}
          >
            {label}
          </button>
          <button type="button" autofocus onClick={() => dialog.current?.close()}>
            {t('common.cancel')}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** The last card of an entity's page: delete it (after asking), then back to its list. */
export function DeleteCard({
  label,
  question,
  path,
  back,
}: {
  label: string;
  question: string;
  path: string;
  back: string;
}) {
  const action = useAction();
  return (
    <section class="card">
      <h2>{t('common.delete')}</h2>
      <ConfirmButton
        label={label}
        question={question}
        onConfirm={() => action.run(() => api('DELETE', path).then(() => navigate(back)))}
      />
      <FormError error={action.error} />
    </section>
  );
}

/**
 * A checkbox shown as a switch (role=switch: read out as on/off). It moves at once; `onChange`
 * saves, and the switch moves back if that fails.
 */
export function Switch({
  label,
  checked,
  disabled,
  onChange,
  describedBy,
}: {
  label: string;
  checked: boolean;
  disabled?: boolean;
  onChange: (value: boolean) => Promise<boolean>;
  describedBy?: string;
}) {
  const [value, setValue] = useState(checked);
  useEffect(() => setValue(checked), [checked]);
  const change = (next: boolean) => {
    setValue(next);
    void onChange(next).then((saved) => saved || setValue(!next));
  };
  return (
    <label class="switch">
      <input
        type="checkbox"
        role="switch"
        checked={value}
        disabled={disabled}
        aria-describedby={describedBy}
        onChange={(event) => change(event.currentTarget.checked)}
      />
      <span class="track" aria-hidden="true" />
      {label}
    </label>
  );
}

/** The page's loading and error states, then its content. */
export function Loaded<T>({
  state,
  children,
}: {
  state: { data?: T; error?: ApiError; loading: boolean };
  children: (data: T) => ComponentChildren;
}) {
  if (state.error) {
    return (
      <p class="error" role="alert">
        {errorText(state.error)}
      </p>
    );
  }
  if (state.data === undefined) {
    return <p aria-busy="true">{t('shell.loading')}</p>;
  }
  return <>{children(state.data)}</>;
}

/**
 * A date and time typed in the console's language (i18n/dates.ts reads it: `enteredInstant`); the
 * placeholder and hint show that language's order.
 */
export function DateTimeField({
  label,
  name,
  error,
  required,
}: {
  label: string;
  name: string;
  error?: ApiError;
  required?: boolean;
}) {
  const example = entryExample();
  return (
    <Field
      label={label}
      name={name}
      error={error}
      required={required}
      placeholder={example}
      hint={t('dates.entryHint', { example })}
      autocomplete="off"
    />
  );
}

/**
 * The form's values by field name (every control needs a `name`). A field may be missing: an
 * unchecked checkbox, a disabled control. A file control gives its file's name.
 */
export function formValues(event: Event): Partial<Record<string, string>> {
  event.preventDefault();
  const data = new FormData(event.currentTarget as HTMLFormElement);
  return Object.fromEntries(
    [...data.entries()].map(([key, value]) => [key, typeof value === 'string' ? value : value.name]),
  );
}

/** One value a line (redirect URIs, domains), blanks dropped. */
export const lines = (text: string | undefined) =>
  (text ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
