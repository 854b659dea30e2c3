import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Client routes live under /console/ (the service answers every one with the application's page). */
export const base = '/console';

const listeners = new Set<() => void>();

export function navigate(to: string, { replace = false } = {}): void {
  const url = `${base}${to}`;
  if (replace) {
    history.replaceState(null, '', url);
  } else {
    history.pushState(null, '', url);
  }
  listeners.forEach((listener) => listener());
}

/** The path below /console (`/applications/abc`), re-rendering on navigation and back/forward. */
export function usePath(): string {
  const read = () => location.pathname.slice(base.length) || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const update = () => setPath(read());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** A real link (middle-click, copy address work); a plain click stays in the application. */
export function Link({ to, children, current }: { to: string; children: ComponentChildren; current?: boolean }) {
  return (
    <a
      href={`${base}${to}`}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        if (!event.metaKey && !event.ctrlKey && !event.shiftKey && event.button === 0) {
          event.preventDefault();
          navigate(to);
        }
      }}
    >
      {children}
    </a>
  );
}
