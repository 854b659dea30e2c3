import type { ServiceClient } from './service.ts';
import { unique } from './values.ts';

type Application = { id: string; secret: string; name: string; type: string };
type Resource = { id: string; indicator: string };

/** An API resource with the named scopes; returns the resource and its scope ids by name. */
export async function createResource(service: ServiceClient, scopes: string[], accessTokenTtl?: number) {
  const indicator = `https://${unique('api')}.example.com`;
  const resource = (
    await service.api.post('resources', {
      json: { name: indicator, indicator, ...(accessTokenTtl && { accessTokenTtl }) },
    })
  ).body as Resource;
  const scopeIds: Record<string, string> = {};
  for (const name of scopes) {
    const scope = (await service.api.post(`resources/${resource.id}/scopes`, { json: { name } })).body as {
      id: string;
    };
    scopeIds[name] = scope.id;
  }
  return { resource, scopeIds };
}

/** An application; a confidential one with the value of the "Default secret" it is created with as `secret`. */
export async function createApplication(
  service: Pick<ServiceClient, 'api'>,
  type: string,
  extra: Record<string, unknown> = {},
) {
  const application = (await service.api.post('applications', { json: { name: unique('app'), type, ...extra } }))
    .body as Application;
  if (type !== 'MachineToMachine' && type !== 'Traditional') {
    return application;
  }
  return { ...application, secret: await defaultSecretOf(service, application.id) };
}

/** The value of the named secret a confidential application is created with (Logto's "Default secret"). */
export async function defaultSecretOf(service: Pick<ServiceClient, 'api'>, applicationId: string): Promise<string> {
  const secrets = (await service.api.get(`applications/${applicationId}/secrets`)).body as Array<{
    name: string;
    value: string;
  }>;
  const secret = secrets.find(({ name }) => name === 'Default secret');
  if (!secret) {
    throw new Error(`application ${applicationId} has no Default secret`);
  }
  return secret.value;
}

/** A machine-to-machine application holding one role with the given scope ids. */
export async function createMachineWithScopes(service: ServiceClient, scopeIds: string[]) {
  const application = await createApplication(service, 'MachineToMachine');
  const role = (
    await service.api.post('roles', {
      json: { name: unique('role'), description: 'test role', type: 'MachineToMachine', scopeIds },
    })
  ).body as { id: string };
  await service.api.post(`applications/${application.id}/roles`, { json: { roleIds: [role.id] } });
  return { application, role };
}
