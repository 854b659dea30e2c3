/** Every instance shares one logical tenant, named as Logto names its single OSS tenant. */
export const tenantId = 'default';
