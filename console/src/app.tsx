import { useEffect, useState } from 'preact/hooks';

import { whenUnauthorized } from './api.ts';
import {
  completeSignIn,
  type ConsoleConfig,
  currentSession,
  isAdministrator,
  loadConfig,
  signIn,
  signInAs,
  signOut,
} from './auth.ts';
import { type Language, languages, setLanguage, t, useLanguage } from './i18n/index.ts';
import { ApplicationPage, ApplicationsPage } from './pages/applications.tsx';
import { AuditLogPage } from './pages/audit-log.tsx';
import { DashboardPage } from './pages/dashboard.tsx';
import { EmailTemplatesPage } from './pages/email-templates.tsx';
import { OrganizationRolesPage } from './pages/organization-roles.tsx';
import { OrganizationPage, OrganizationsPage } from './pages/organizations.tsx';
import { ResourcePage, ResourcesPage } from './pages/resources.tsx';
import { RolePage, RolesPage } from './pages/roles.tsx';
import { FirstAdministrator } from './pages/setup.tsx';
import { SignInExperiencePage } from './pages/sign-in-experience.tsx';
import { UserPage, UsersPage } from './pages/users.tsx';
import { WebhookPage, WebhooksPage } from './pages/webhooks.tsx';
import { Link, navigate, usePath } from './router.tsx';

const sections = [
  ['/', 'nav.dashboard'],
  ['/applications', 'nav.applications'],
  ['/resources', 'nav.resources'],
  ['/roles', 'nav.roles'],
  ['/users', 'nav.users'],
  ['/organizations', 'nav.organizations'],
  ['/organization-roles', 'nav.organizationRoles'],
  ['/webhooks', 'nav.webhooks'],
  ['/sign-in-experience', 'nav.signInExperience'],
  ['/email-templates', 'nav.emailTemplates'],
  ['/audit-log', 'nav.auditLog'],
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
          {t('shell.notFound')} <Link to="/">{t('shell.toDashboard')}</Link>
        </p>
      );
  }
}

/** The console's language, named in each language; a change re-renders the console in place. */
function LanguageSwitcher() {
  const language = useLanguage();
  return (
    <label class="language">
      {t('shell.language')}{' '}
      <select value={language} onChange={(event) => setLanguage(event.currentTarget.value as Language)}>
        {Object.entries(languages).map(([tag, name]) => (
          <option key={tag} value={tag} lang={tag}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Signed out: the first run's form, or the way to the sign-in page. */
function Welcome({ config, problem }: { config: ConsoleConfig; problem?: string }) {
  const [created, setCreated] = useState(false);
  const returnTo = location.pathname.slice('/console'.length) || '/';
  return (
    <main class="welcome">
      <LanguageSwitcher />
      <h1>{t('shell.title')}</h1>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      {config.firstRun !== 'closed' && !created ? (
        <FirstAdministrator
          needsSetupToken={config.firstRun === 'setup-token'}
          onCreated={(administrator) => {
            setCreated(true);
            void signInAs(config, '/', administrator);
          }}
        />
      ) : (
        <>
          {created && <p role="status">{t('shell.created')}</p>}
          {!created && !config.hasAdministrator && <p role="status">{t('shell.noAdministrator')}</p>}
          <button
            type="button"
            class="primary"
            onClick={() => void signIn(config, returnTo === '/callback' ? '/' : returnTo)}
          >
            {t('shell.signIn')}
          </button>
        </>
      )}
    </main>
  );
}

export function App() {
  // Read here so that a switch re-renders the whole console: every component reads `t` as it renders.
  useLanguage();
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
      <p aria-busy="true">{t('shell.loading')}</p>
    );
  }
  if (!session) {
    return <Welcome config={config} problem={problem} />;
  }
  if (!isAdministrator(session)) {
    return (
      <main class="welcome">
        <LanguageSwitcher />
        <h1>{t('shell.title')}</h1>
        <p class="error" role="alert">
          {t('shell.notAdministrator')}
        </p>
        <button type="button" onClick={() => signOut(config)}>
          {t('shell.signOut')}
        </button>
      </main>
    );
  }
  const current = `/${path.split('/')[1] ?? ''}`;
  return (
    <div class="layout">
      <header>
        <a class="skip" href="#main">
          {t('shell.skip')}
        </a>
        <strong>{t('shell.brand')}</strong>
        <div class="account">
          <LanguageSwitcher />
          <button type="button" onClick={() => signOut(config)}>
            {t('shell.signOut')}
          </button>
        </div>
      </header>
      <nav aria-label={t('shell.sections')}>
        {sections.map(([to, label]) => (
          <Link key={to} to={to} current={current === to}>
            {t(label)}
          </Link>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        {page(path)}
      </main>
    </div>
  );
}
