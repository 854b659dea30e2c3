import { type ComponentChildren, createContext, Fragment } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';

import { ApiError } from './api.ts';
import { Invalid } from './checks.ts';
import { explain, type Explained } from './errors.ts';
import { isLeaving } from './flow.ts';

/** Focuses the element when it appears (a step's first input, a heading, a message to read). */
export function useFocusOnMount<T extends HTMLElement>(when: boolean) {
  const ref = useRef<T>(null);
  useEffect(() => {
    if (when) {
      ref.current?.focus();
    }
  }, []);
  return ref;
}

/** What went wrong, on which input (by id); `seq` tells one failure from the next with the same text. */
type Failure = Explained & { field?: string; seq: number };

/** Which input an API error is about, when it is about one. */
type FieldFor = (error: ApiError) => string | undefined;

export type FormState = {
  busy: boolean;
  failure?: Failure;
  /** Runs `task` with the form busy (a second run meanwhile is ignored); what goes wrong is said in the form. */
  run(task: () => Promise<void>, fieldFor?: FieldFor): Promise<void>;
  clear(): void;
};

let failures = 0;

export function useForm(): FormState {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure>();
  const running = useRef(false);
  return {
    busy,
    failure,
    clear: () => setFailure(undefined),
    async run(task, fieldFor) {
      if (running.current) {
        return;
      }
      running.current = true;
      setBusy(true);
      setFailure(undefined);
      try {
        await task();
      } catch (error) {
        const field =
          error instanceof Invalid ? error.field : error instanceof ApiError ? fieldFor?.(error) : undefined;
        setFailure({ ...explain(error), field, seq: ++failures });
      } finally {
        // Once the browser is leaving, the form stays busy: nothing more should be sent from it.
        if (!isLeaving()) {
          running.current = false;
          setBusy(false);
        }
      }
    },
  };
}

const FormContext = createContext<{ failure?: Failure; errorId: string; busy: boolean }>({ errorId: '', busy: false });

type FormProps = {
  id: string;
  form: FormState;
  /** What submitting does (without it, the form has no submit button: its buttons act). */
  onSubmit?: () => Promise<void>;
  fieldFor?: FieldFor;
  /** The submit button's text, and while busy; `focus`: it takes the focus when the form appears. */
  submit?: { label: string; busy: string; focus?: boolean };
  labelledBy?: string;
  /** What the form is for, read with its name (an intro outside the form). */
  describedBy?: string;
  /** The inputs and text before the error and the submit button. */
  children?: ComponentChildren;
  /** Buttons after the submit button. */
  actions?: ComponentChildren;
};

/**
 * A form of the pages: its inputs, an error region (a live region, present before it speaks), the
 * submit button, which says what is happening while the form is busy, and other actions. A failure
 * marks its input invalid, points it at the error and puts the focus in it.
 */
export function Form({ id, form, onSubmit, fieldFor, submit, labelledBy, describedBy, children, actions }: FormProps) {
  const element = useRef<HTMLFormElement>(null);
  const submitButton = useFocusOnMount<HTMLButtonElement>(submit?.focus === true);
  const errorId = `${id}-error`;
  const { failure, busy } = form;
  // A new failure puts the focus on its input; one the form shows again (back from another step) leaves the focus be.
  const shown = useRef(failure?.seq);
  useEffect(() => {
    if (failure?.seq === shown.current) {
      return;
    }
    shown.current = failure?.seq;
    const target = failure?.field ? element.current?.querySelector<HTMLInputElement>(`#${failure.field}`) : undefined;
    target?.focus();
    target?.select();
  }, [failure]);
  return (
    <form
      id={id}
      ref={element}
      noValidate
      aria-labelledby={labelledBy}
      aria-describedby={describedBy}
      aria-busy={busy ? 'true' : undefined}
      onSubmit={(event) => {
        event.preventDefault();
        if (onSubmit) {
          void form.run(onSubmit, fieldFor);
        }
      }}
    >
      <FormContext.Provider value={{ failure, errorId, busy }}>
        {children}
        <div class="error" id={errorId} data-error aria-live="assertive" aria-atomic="true">
          {/* A new failure is new nodes, so that it is announced even when its text is the last one's. */}
          {failure && (
            <Fragment key={failure.seq}>
              <p>{failure.text}</p>
              {failure.list && failure.list.length > 0 && (
                <ul>
                  {failure.list.map((item) => (
                    <li key={item}>{item}</li>
                  ))}
                </ul>
              )}
            </Fragment>
          )}
        </div>
        {submit && (
          <button type="submit" class="primary" disabled={busy} ref={submitButton}>
            {busy ? submit.busy : submit.label}
          </button>
        )}
        {actions}
      </FormContext.Provider>
    </form>
  );
}

type ButtonProps = {
  class: 'secondary' | 'link';
  onClick: () => void;
  children: ComponentChildren;
};

/** A button of a form that does something other than submit it; off while the form is busy. */
export function Action({ class: kind, onClick, children }: ButtonProps) {
  const { busy } = useContext(FormContext);
  return (
    <button type="button" class={kind} disabled={busy} onClick={onClick}>
      {children}
    </button>
  );
}

type FieldProps = {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  hint?: string;
  /** Takes the focus when it appears. */
  focus?: boolean;
  type?: 'text' | 'email' | 'password' | 'tel';
  name: string;
  autocomplete: string;
  inputMode?: 'numeric' | 'text';
  maxLength?: number;
  /** For usernames, emails and codes: no capitals, no spelling help. */
  verbatim?: boolean;
  class?: string;
};

/** A labelled input of a form, with its hint; marked invalid when the form's failure is about it. */
export function Field({ id, label, value, onInput, hint, focus, type = 'text', verbatim, ...input }: FieldProps) {
  const { failure, errorId } = useContext(FormContext);
  const ref = useFocusOnMount<HTMLInputElement>(focus === true);
  const invalid = failure?.field === id;
  const hintId = hint ? `${id}-hint` : undefined;
  const describedBy = [hintId, invalid ? errorId : undefined].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {/* Preact types `<input>` per `type` value; this one takes only attributes every text-like type has. */}
      <input
        ref={ref}
        id={id}
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc -p sign-in needs it (without it: TS2322); the rule misreads the attribute's contextual type
        type={type as 'text'}
        value={value}
        onInput={(event) => onInput(event.currentTarget.value)}
        required
        aria-invalid={invalid ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
        {...(verbatim && { autocapitalize: 'none', spellcheck: false })}
        {...input}
      />
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
    </div>
  );
}
