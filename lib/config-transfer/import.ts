import type { Knex } from 'knex';

import { assertDeviceFlowUnchanged, assertSettingsFitType } from '../applications/applications.ts';
import { type ApplicationType, confidentialTypes, type CustomClientMetadata } from '../applications/schemas.ts';
import { ConfigError } from '../config/env.ts';
import { assertHookTarget } from '../hooks/target-guard.ts';
import { RequestError } from '../http/errors.ts';
import { assertOrganizationRoleTypes } from '../organizations/lookups.ts';
import type { OrganizationRoleType } from '../organizations/schemas.ts';
import { assertMachineToMachineRoles, assertRoleHolderType, assertScopesFitRoleType } from '../roles/assignments.ts';
import type { RoleType } from '../roles/schemas.ts';
import { type Translation, unknownKeys } from '../shared/phrases/index.ts';
import { upsertAccountCenter } from '../sign-in-experience/account-center/account-center-queries.ts';
import { defaultSignInExperience } from '../sign-in-experience/schemas.ts';
import { assertSignInExperienceChange, saveSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../storage/database.ts';
import { bumpCacheVersion, type CacheName } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';
import { assertNotOwnIssuer } from '../trusted-issuers/policy-rules.ts';
import { builtIn, type ConfigFile, configFileSchema } from './file.ts';
import type { Entry, ImportProgress, Kind, ListName } from './kind.ts';
import { kinds } from './kinds/all.ts';
import { storedById, storedValues } from './queries.ts';
import type { ConfigTable } from './tables.ts';

/** Rows created and updated, and what the operator must still do: secrets generated or missing because the file had none. */
export type ImportReport = ImportProgress;

/** At most this many problems are listed: a file that is wrong everywhere is wrong. */
const problemsShown = 20;

function refuse(source: string, problems: string[]): never {
  const shown = problems.slice(0, problemsShown).map((problem) => `  ${problem}`);
  const more = problems.length > problemsShown ? [`  ... and ${problems.length - problemsShown} more`] : [];
  throw new ConfigError(
    [`${source} is not a configuration this service can import; nothing was changed:`, ...shown, ...more].join('\n'),
  );
}

const pathOf = (path: readonly PropertyKey[]) =>
  path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./, '');

/**
 * What is wrong with a file, as lines naming where: its shape (the schema), then what can be checked
 * without a database (ids given twice, built-in rows, two default resources).
 */
export function configFileProblems(value: unknown): string[] {
  const result = configFileSchema.safeParse(value);
  if (!result.success) {
    return result.error.issues.map((issue) => `${pathOf(issue.path) || '(the file)'}: ${issue.message}`);
  }
  const file = value as ConfigFile;
  const scopes = file.resources.flatMap((resource) => resource.scopes);
  return [
    ...duplicates('resources', file.resources),
    ...duplicates('scopes', scopes),
    ...duplicates('roles', file.roles),
    ...duplicates('applications', file.applications),
    ...duplicates('organizationScopes', file.organizationScopes),
    ...duplicates('organizationRoles', file.organizationRoles),
    ...duplicates('ssoConnectors', file.ssoConnectors),
    ...duplicates('connectors', file.connectors),
    ...duplicates('organizations', file.organizations),
    ...duplicates('hooks', file.hooks),
    ...duplicates('applicationSecrets', file.applicationSecrets ?? []),
    ...duplicates('trustedIssuers', file.trustedIssuers ?? []),
    ...duplicates('customPhrases', file.customPhrases ?? []),
    ...duplicates('emailTemplates', file.emailTemplates ?? []),
    ...builtInEntries('resources', file.resources, builtIn.resourceIds),
    ...builtInEntries('scopes', scopes, builtIn.scopeIds),
    ...builtInEntries('roles', file.roles, builtIn.roleIds),
    ...builtInEntries('applications', file.applications, builtIn.applicationIds),
    ...(file.applicationSecrets ?? [])
      .filter(({ applicationId }) => builtIn.applicationIds.has(applicationId))
      .map(({ id, applicationId }) => `applicationSecrets: ${id} belongs to ${applicationId}, which is built in`),
    // As the API refuses them: a custom phrase only replaces a text the catalogue has.
    ...(file.customPhrases ?? []).flatMap(({ languageTag, translation }, index) =>
      unknownKeys(translation as Translation)
        .slice(0, 5)
        .map((key) => `customPhrases[${index}] (${languageTag}).${key}: is not a phrase of the catalogue`),
    ),
    ...(file.resources.filter((resource) => resource.isDefault).length > 1
      ? ['resources: at most one is the default (isDefault)']
      : []),
  ];
}

/** Reads a file's text, refusing (ConfigError, every problem named) one that is not JSON or has problems. */
export function parseConfigFile(text: string, source: string): ConfigFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    refuse(source, [`not JSON: ${(error as Error).message}`]);
  }
  const problems = configFileProblems(value);
  if (problems.length > 0) {
    refuse(source, problems);
  }
  // Written as given (see ConfigFile): the schema only checked it.
  return value as ConfigFile;
}

function duplicates(list: string, entries: Array<{ id: string }>): string[] {
  const seen = new Set<string>();
  return entries
    .filter(({ id }) => seen.size === seen.add(id).size)
    .map(({ id }) => `${list}: id ${id} appears more than once`);
}

function builtInEntries(list: string, entries: Array<{ id: string }>, ids: Set<string>): string[] {
  return entries
    .filter(({ id }) => ids.has(id))
    .map(({ id }) => `${list}: ${id} is built in (every database has it; it is not imported)`);
}

/** A refusal of one of the API's own rules (a RequestError) as a problem line; anything else is thrown on. */
function problemOf(where: string, error: unknown): string {
  if (error instanceof RequestError) {
    return `${where}: ${error.message}`;
  }
  throw error;
}

/**
 * What one of the API's rules (the domain's function the route calls) says of an entry: the import
 * applies the routes' rules from the same code.
 */
function refusal(where: string, rule: () => void): string[] {
  try {
    rule();
    return [];
  } catch (error) {
    return [problemOf(where, error)];
  }
}

/** Hooks whose target the API would refuse (resolved before the transaction: no transaction waits on DNS). */
async function hookTargetProblems(file: ConfigFile, allowPrivateTargets: boolean): Promise<string[]> {
  const problems = await Promise.all(
    file.hooks.map((hook, index) =>
      assertHookTarget(hook.config.url, allowPrivateTargets).then(
        () => [],
        (error: unknown) => [problemOf(`hooks[${index}].config.url`, error)],
      ),
    ),
  );
  return problems.flat();
}

/** Ids the file refers to that neither it nor the database holds, and assignments the API would refuse. */
async function referenceProblems(trx: Queryable, file: ConfigFile, ownIssuer: string): Promise<string[]> {
  const problems: string[] = [];
  const known = async (table: ConfigTable, inFile: Iterable<string>) =>
    new Set([...(await storedValues(trx, table)), ...inFile]);

  const scopeIds = await known(
    'scopes',
    file.resources.flatMap((resource) => resource.scopes.map((scope) => scope.id)),
  );
  const roleTypes = new Map<string, string>(
    [...(await storedById(trx, 'roles', 'type'))].map(([id, row]) => [id, String(row.type)]),
  );
  for (const role of file.roles) {
    roleTypes.set(role.id, role.type);
  }
  const storedApplications = await storedById(trx, 'applications', 'type', 'custom_client_metadata', 'is_third_party');
  const applicationTypes = new Map<string, string>([...storedApplications].map(([id, row]) => [id, String(row.type)]));
  for (const application of file.applications) {
    applicationTypes.set(application.id, application.type);
  }
  const organizationScopeIds = await known(
    'organization_scopes',
    file.organizationScopes.map((scope) => scope.id),
  );
  const organizationRoles = new Map<string, { name: string; type: OrganizationRoleType }>(
    [...(await storedById(trx, 'organization_roles', 'name', 'type'))].map(([id, row]) => [
      id,
      { name: String(row.name), type: row.type as OrganizationRoleType },
    ]),
  );
  for (const role of file.organizationRoles) {
    organizationRoles.set(role.id, { name: role.name, type: role.type });
  }
  const organizationRolesOf = (ids: string[]) =>
    ids.flatMap((id) => {
      const role = organizationRoles.get(id);
      return role ? [role] : [];
    });
  const ssoConnectorIds = await known(
    'sso_connectors',
    file.ssoConnectors.map((connector) => connector.id),
  );
  /** Each scope's resource, for the rules on what a role may hold. */
  const scopeResources = new Map<string, string>(
    [...(await storedById(trx, 'scopes', 'resource_id'))].map(([id, row]) => [id, String(row.resource_id)]),
  );
  for (const resource of file.resources) {
    for (const scope of resource.scopes) {
      scopeResources.set(scope.id, resource.id);
    }
  }
  const scopesOf = (ids: string[]) =>
    ids.flatMap((id) => {
      const resourceId = scopeResources.get(id);
      return resourceId === undefined ? [] : [{ resourceId }];
    });
  const storedCustomMetadata = new Map<string, CustomClientMetadata>(
    [...storedApplications].map(([id, row]) => [
      id,
      JSON.parse(String(row.custom_client_metadata)) as CustomClientMetadata,
    ]),
  );

  const missing = (where: string, what: string, ids: string[], exists: (id: string) => boolean) => {
    for (const id of ids.filter((id) => !exists(id))) {
      problems.push(`${where}: no ${what} ${id} in the file or the database`);
    }
  };
  file.roles.forEach((role, index) => {
    missing(`roles[${index}].scopeIds`, 'scope', role.scopeIds, (id) => scopeIds.has(id));
    problems.push(...refusal(`roles[${index}]`, () => assertScopesFitRoleType(role.type, scopesOf(role.scopeIds))));
  });
  file.applications.forEach((application, index) => {
    const where = `applications[${index}]`;
    missing(`${where}.roleIds`, 'role', application.roleIds, (id) => roleTypes.has(id));
    if (application.roleIds.length > 0) {
      problems.push(...refusal(where, () => assertRoleHolderType(application)));
    }
    const heldTypes = application.roleIds.flatMap((id) => {
      const type = roleTypes.get(id);
      return type === undefined ? [] : [{ type: type as RoleType }];
    });
    problems.push(...refusal(`${where}.roleIds`, () => assertMachineToMachineRoles(heldTypes)));
    const custom = application.customClientMetadata;
    problems.push(
      ...refusal(where, () =>
        assertSettingsFitType({ type: application.type, isThirdParty: application.isThirdParty }, custom),
      ),
    );
    const stored = storedCustomMetadata.get(application.id);
    if (stored) {
      problems.push(...refusal(where, () => assertDeviceFlowUnchanged(stored, custom)));
    }
  });
  (file.applicationSecrets ?? []).forEach((secret, index) => {
    missing(`applicationSecrets[${index}]`, 'application', [secret.applicationId], (id) => applicationTypes.has(id));
    const type = applicationTypes.get(secret.applicationId) as ApplicationType | undefined;
    if (type !== undefined && !confidentialTypes.has(type)) {
      problems.push(`applicationSecrets[${index}]: only MachineToMachine and Traditional applications have secrets`);
    }
  });
  const thirdParty = new Set([
    ...[...storedApplications].filter(([, row]) => Boolean(row.is_third_party)).map(([id]) => id),
    ...file.applications.filter((application) => application.isThirdParty).map((application) => application.id),
  ]);
  (file.applicationConsentScopes ?? []).forEach((entry, index) => {
    const where = `applicationConsentScopes[${index}]`;
    missing(where, 'application', [entry.applicationId], (id) => applicationTypes.has(id));
    if (applicationTypes.has(entry.applicationId) && !thirdParty.has(entry.applicationId)) {
      problems.push(`${where}: only third-party applications have user consent scopes`);
    }
    missing(`${where}.organizationScopeIds`, 'organization scope', entry.organizationScopeIds, (id) =>
      organizationScopeIds.has(id),
    );
    for (const list of ['resourceScopeIds', 'organizationResourceScopeIds'] as const) {
      missing(`${where}.${list}`, 'scope', entry[list], (id) => scopeIds.has(id));
    }
  });
  const connectorIds = new Set([
    ...(await known(
      'social_connectors',
      file.connectors.map((connector) => connector.id),
    )),
    ...ssoConnectorIds,
  ]);
  (file.trustedIssuers ?? []).forEach((policy, index) => {
    problems.push(...refusal(`trustedIssuers[${index}].issuer`, () => assertNotOwnIssuer(policy.issuer, ownIssuer)));
    missing(`trustedIssuers[${index}].applicationIds`, 'application', policy.applicationIds, (id) =>
      applicationTypes.has(id),
    );
    const { connectorId } = policy.userMapping;
    if (connectorId !== undefined) {
      missing(`trustedIssuers[${index}].userMapping.connectorId`, 'connector', [connectorId], (id) =>
        connectorIds.has(id),
      );
    }
  });
  file.organizationRoles.forEach((role, index) => {
    missing(`organizationRoles[${index}].organizationScopeIds`, 'organization scope', role.organizationScopeIds, (id) =>
      organizationScopeIds.has(id),
    );
    missing(`organizationRoles[${index}].resourceScopeIds`, 'scope', role.resourceScopeIds, (id) => scopeIds.has(id));
    problems.push(
      ...refusal(`organizationRoles[${index}]`, () =>
        assertScopesFitRoleType(role.type, scopesOf(role.resourceScopeIds)),
      ),
    );
  });
  file.organizations.forEach((organization, index) => {
    organization.applications.forEach((member, memberIndex) => {
      const where = `organizations[${index}].applications[${memberIndex}]`;
      missing(where, 'application', [member.id], (id) => applicationTypes.has(id));
      missing(`${where}.organizationRoleIds`, 'organization role', member.organizationRoleIds, (id) =>
        organizationRoles.has(id),
      );
      problems.push(
        ...refusal(`${where}.organizationRoleIds`, () =>
          assertOrganizationRoleTypes(organizationRolesOf(member.organizationRoleIds), 'MachineToMachine'),
        ),
      );
    });
    const jitRoles = `organizations[${index}].jit.organizationRoleIds`;
    missing(jitRoles, 'organization role', organization.jit.organizationRoleIds, (id) => organizationRoles.has(id));
    problems.push(
      ...refusal(jitRoles, () =>
        assertOrganizationRoleTypes(organizationRolesOf(organization.jit.organizationRoleIds), 'User'),
      ),
    );
    missing(`organizations[${index}].jit.ssoConnectorIds`, 'SSO connector', organization.jit.ssoConnectorIds, (id) =>
      ssoConnectorIds.has(id),
    );
  });
  problems.push(
    ...refusal('signInExperience', () =>
      assertSignInExperienceChange({ ...defaultSignInExperience, ...file.signInExperience }, file.signInExperience),
    ),
  );
  return problems;
}

const caches: CacheName[] = ['applications', 'resources', 'roles', 'hooks', 'connectors', 'settings', 'trustedIssuers'];

/** Writes one kind's entries (none when the file, from before the kind, lacks its list). */
function importKind<K extends ListName>(trx: Queryable, kind: Kind<K>, file: ConfigFile, progress: ImportProgress) {
  return kind.imported(trx, (file[kind.list] ?? []) as Array<Entry<K>>, progress);
}

/**
 * Applies a checked file in one transaction: every entry is created or updated by its id, and its
 * own lists (a resource's scopes, a role's scopes, an application's roles, an organization's member
 * applications and just-in-time settings) become the file's. Lists files from before them lack
 * (named application secrets, trusted issuers, custom phrases, email templates) are taken as empty. Entries the file does not name are
 * left alone. Nothing is written when a reference cannot be resolved or a row collides. No webhook
 * events and no audit entries: it is an operator's change made with the database's credentials.
 */
export async function importConfiguration(
  db: Knex,
  file: ConfigFile,
  source: string,
  options: { hooksAllowPrivateTargets: boolean; issuer: string },
): Promise<ImportReport> {
  const targetProblems = await hookTargetProblems(file, options.hooksAllowPrivateTargets);
  return withTransaction(db, async (trx) => {
    const problems = [...(await referenceProblems(trx, file, options.issuer)), ...targetProblems];
    if (problems.length > 0) {
      refuse(source, problems);
    }
    const progress: ImportProgress = { created: 0, updated: 0, notes: [] };
    for (const kind of kinds) {
      await importKind(trx, kind, file, progress);
    }
    await saveSignInExperience(trx, { ...defaultSignInExperience, ...file.signInExperience });
    if (file.accountCenter) {
      await upsertAccountCenter(trx, file.accountCenter);
    }
    for (const cache of caches) {
      await bumpCacheVersion(trx, cache);
    }
    return progress;
  });
}
