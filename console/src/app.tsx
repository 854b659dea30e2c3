import { useEffect, useState } from 'preact/hooks';

import { whenUnauthorized } from './api.ts';
import {
  completeSignIn,
  currentSession,
  isAdministrator,
  loadConfig,
  signIn,
  signOut,
  type ConsoleConfig,
} from './auth.ts';
import { ApplicationPage, ApplicationsPage } from './pages/applications.tsx';
import { AuditLogPage } from './pages/audit-log.tsx';
import { DashboardPage } from './pages/dashboard.tsx';
import { EmailTemplatesPage } from './pages/email-templates.tsx';
import { OrganizationPage, OrganizationsPage } from './pages/organizations.tsx';
import { OrganizationRolesPage } from './pages/organization-roles.tsx';
import { ResourcePage, ResourcesPage } from './pages/resources.tsx';
import { RolePage, RolesPage } from './pages/roles.tsx';
import { FirstAdministrator } from './pages/setup.tsx';
import { SignInExperiencePage } from './pages/sign-in-experience.tsx';
import { UserPage, UsersPage } from './pages/users.tsx';
import { WebhookPage, WebhooksPage } from './pages/webhooks.tsx';
import { Link, navigate, usePath } from './router.tsx';

const sections = [
  ['/', 'Dashboard'],
  ['/applications', 'Applications'],
  ['/resources', 'API resources'],
  ['/roles', 'Roles'],
  ['/users', 'Users'],
  ['/organizations', 'Organizations'],
  ['/organization-roles', 'Organization roles'],
  ['/webhooks', 'Webhooks'],
  ['/sign-in-experience', 'Sign-in experience'],
  ['/email-templates', 'Email templates'],
  ['/audit-log', 'Audit log'],
] as const;

/** Client routes: `/section` lists, `/section/:id` details. */
function page(path: string) {
  const [, section = '', id] = path.split('/');
  const detail = id ? decodeURIComponent(id) : undefined;
  switch (section) {
    case '':
      return <DashboardPage />;
    case 'applications':
      return detail ? <ApplicationPage id={detail} /> : <ApplicationsPage />;
    case 'resources':
      return detail ? <ResourcePage id={detail} /> : <ResourcesPage />;
    case 'roles':
      return detail ? <RolePage id={detail} /> : <RolesPage />;
    case 'users':
      return detail ? <UserPage id={detail} /> : <UsersPage />;
    case 'organizations':
      return detail ? <OrganizationPage id={detail} /> : <OrganizationsPage />;
    case 'organization-roles':
      return <OrganizationRolesPage />;
    case 'webhooks':
      return detail ? <WebhookPage id={detail} /> : <WebhooksPage />;
    case 'sign-in-experience':
      return <SignInExperiencePage />;
    case 'email-templates':
      return <EmailTemplatesPage />;
    case 'audit-log':
      return <AuditLogPage />;
    default:
      return (
        <p>
          There is no page here. <Link to="/">Go to the dashboard</Link>.
        </p>
      );
  }
}

/** Signed out: the first run's form, or the way to the sign-in page. */
function Welcome({ config, problem }: { config: ConsoleConfig; problem?: string }) {
  const [created, setCreated] = useState(false);
  const returnTo = location.pathname.slice('/console'.length) || '/';
  return (
    <main class="welcome">
      <h1>Admin console</h1>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      {config.firstRun !== 'closed' && !created ? (
        <FirstAdministrator needsSetupToken={config.firstRun === 'setup-token'} onCreated={() => setCreated(true)} />
      ) : (
        <>
          {created && <p role="status">The administrator is created. Sign in with that username and password.</p>}
          {!created && !config.hasAdministrator && (
            <p role="status">
              No administrator exists, and one existed before: make one on the service's machine with npm run cli --
              create-admin.
            </p>
          )}
          <button
            type="button"
            class="primary"
            onClick={() => void signIn(config, returnTo === '/callback' ? '/' : returnTo)}
          >
            Sign in
          </button>
        </>
      )}
    </main>
  );
}

export function App() {
  const path = usePath();
  const [config, setConfig] = useState<ConsoleConfig>();
  const [problem, setProblem] = useState<string>();
  const [session, setSession] = useState(currentSession);

  useEffect(() => {
    whenUnauthorized(() => setSession(undefined));
    loadConfig().then(
      async (loaded) => {
        if (path === '/callback') {
          try {
            const returnTo = await completeSignIn(loaded, new URL(location.href));
            setSession(currentSession());
            navigate(returnTo, { replace: true });
          } catch (error) {
            setProblem(error instanceof Error ? error.message : String(error));
            navigate('/', { replace: true });
          }
        }
        setConfig(loaded);
      },
      (error: unknown) => setProblem(String(error)),
    );
  }, []);

  if (!config) {
    return problem ? (
      <p class="error" role="alert">
        {problem}
      </p>
    ) : (
      <p aria-busy="true">Loading…</p>
    );
  }
  if (!session) {
    return <Welcome config={config} problem={problem} />;
  }
  if (!isAdministrator(session)) {
    return (
      <main class="welcome">
        <h1>Admin console</h1>
        <p class="error" role="alert">
          This account is not an administrator: it does not hold the management API's `all` scope.
        </p>
        <button type="button" onClick={() => signOut(config)}>
          Sign out
        </button>
      </main>
    );
  }
  const current = `/${path.split('/')[1] ?? ''}`;
  return (
    <div class="layout">
      <header>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <strong>Identity console</strong>
        <button type="button" onClick={() => signOut(config)}>
          Sign out
        </button>
      </header>
      <nav aria-label="Sections">
        {sections.map(([to, label]) => (
          <Link key={to} to={to} current={current === to}>
            {label}
          </Link>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        {page(path)}
      </main>
    </div>
  );
}
