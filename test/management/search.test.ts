import { expect } from 'chai';

import { type HttpResponse, logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';

type Entity = { id: string };
type User = Entity & { username: string | null; primaryEmail: string | null; name: string | null };
type ErrorBody = { code: string; message: string; details?: Array<{ in: string; path: string; message: string }> };

/**
 * Logto's search parameters on the management API's lists (`search`, `search.<field>`, `mode`,
 * `joint`, `isCaseSensitive`): each mode on the database the run uses (TEST_DATABASE), and what a
 * list does not support refused with 400 naming the parameter.
 */
describe('management API: search parameters of lists', () => {
  let service: TestService;
  const marker = unique('srch');
  let alice: User;
  let malice: User;
  let underscore: User;
  let lookalike: User;
  let percent: User;
  let thousand: User;
  let backslash: User;
  let accented: User;
  let padded: User;

  async function createUser(body: Record<string, unknown>): Promise<User> {
    const response = await service.api.post<User>('users', { json: body });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  const get = (path: string, query: Array<[string, string]>) =>
    service.api.get<Entity[] | ErrorBody>(path, { searchParams: new URLSearchParams(query) });

  /** The ids a list answers, in any order, and checks that Total-Number agrees. */
  async function ids(path: string, query: Array<[string, string]>): Promise<string[]> {
    const response = await get(path, query);
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    const found = (response.body as Entity[]).map(({ id }) => id);
    expect(response.headers['total-number']).to.equal(String(found.length));
    return found;
  }

  const users = (...query: Array<[string, string]>) => ids('users', query);

  /**
   * 400 naming the parameter: a search parameter's refusal is Logto's `request.invalid_input` (its
   * `details` a sentence per parameter), any other parameter's `guard.invalid_input`.
   */
  function expectRefused(response: HttpResponse<unknown>, parameter: string) {
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(400);
    const body = response.body as { code: string; message: string; details?: unknown };
    expect(body.message).to.include(parameter);
    if (/^(search|mode|joint|isCaseSensitive)/.test(parameter)) {
      expect(body.code).to.equal('request.invalid_input');
      expect(body.details).to.be.a('string').and.include(parameter);
    } else {
      expect(body.code).to.equal('guard.invalid_input');
      expect((body.details as Array<{ path: string }>).map(({ path }) => path)).to.include(parameter);
    }
  }

  before(async () => {
    service = await startService();
    alice = await createUser({
      username: `${marker}_alice`,
      primaryEmail: `alice.${marker}@example.com`,
      name: 'Alice',
    });
    malice = await createUser({ username: `${marker}_malice`, primaryEmail: `malice.${marker}@example.com` });
    underscore = await createUser({ username: `${marker}_bob` });
    lookalike = await createUser({ username: `${marker}xbob` });
    percent = await createUser({ name: `${marker} 100% sure` });
    thousand = await createUser({ name: `${marker} 1000 sure` });
    backslash = await createUser({ name: `${marker} back\\slash` });
    accented = await createUser({ name: `Élodie ${marker}` });
    padded = await createUser({ name: `${marker} padded` });
  });
  after(() => service.stop());

  describe('like (the default mode): a LIKE pattern against the whole value', () => {
    it('finds the user by email and not another whose email contains it, whatever the case', async () => {
      expect(await users(['search.primaryEmail', `alice.${marker}@example.com`])).to.deep.equal([alice.id]);
      expect(await users(['search.primaryEmail', `ALICE.${marker}@Example.COM`])).to.deep.equal([alice.id]);
      expect(await users(['search.primaryEmail', `%alice.${marker}@example.com`])).to.have.members([
        alice.id,
        malice.id,
      ]);
      expect(await users(['search.primaryEmail', `%.${marker}@example.COM`])).to.have.members([alice.id, malice.id]);
    });

    it('reads % and _ as wildcards, and \\%, \\_ and \\\\ as the plain characters', async () => {
      expect(await users(['search.username', `${marker}_bob`])).to.have.members([underscore.id, lookalike.id]);
      expect(await users(['search.username', `${marker}\\_bob`])).to.deep.equal([underscore.id]);
      expect(await users(['search.name', `${marker} 100%`])).to.have.members([percent.id, thousand.id]);
      expect(await users(['search.name', `${marker} 100\\% sure`])).to.deep.equal([percent.id]);
      expect(await users(['search.name', `%100\\%%`])).to.deep.equal([percent.id]);
      expect(await users(['search.name', `${marker} back\\\\slash`])).to.deep.equal([backslash.id]);
      expect(await users(['search.name', `${marker} back\\slash`])).to.deep.equal([]);
    });

    it('folds case the same way on every database, letters beyond ASCII included', async () => {
      expect(await users(['search.name', `élodie ${marker.toUpperCase()}`])).to.deep.equal([accented.id]);
      expect(await users(['search.name', `%LODIE ${marker}`])).to.deep.equal([accented.id]);
    });

    it('is case-sensitive with isCaseSensitive=true', async () => {
      expect(await users(['search.name', `Élodie ${marker}`], ['isCaseSensitive', 'true'])).to.deep.equal([
        accented.id,
      ]);
      expect(await users(['search.name', `élodie ${marker}`], ['isCaseSensitive', 'true'])).to.deep.equal([]);
      expect(
        await users(['search.primaryEmail', `ALICE.${marker}@example.com`], ['isCaseSensitive', 'true']),
      ).to.deep.equal([]);
      // Wildcards and escapes read the same when case counts (SQLite matches with GLOB then).
      expect(await users(['search.username', `${marker}_bob`], ['isCaseSensitive', 'true'])).to.have.members([
        underscore.id,
        lookalike.id,
      ]);
      expect(await users(['search.username', `${marker}\\_b?b`], ['isCaseSensitive', 'true'])).to.deep.equal([]);
      expect(await users(['search.name', `${marker} 100\\%%`], ['isCaseSensitive', 'true'])).to.deep.equal([
        percent.id,
      ]);
      expect(await users(['search.name', `${marker} [a-z]%`], ['isCaseSensitive', 'true'])).to.deep.equal([]);
    });

    it('searches id, username, email, phone and name with a plain search', async () => {
      expect(await users(['search', `%${marker}%`])).to.have.members([
        alice.id,
        malice.id,
        underscore.id,
        lookalike.id,
        percent.id,
        thousand.id,
        backslash.id,
        accented.id,
        padded.id,
      ]);
      expect(await users(['search', alice.id])).to.deep.equal([alice.id]);
    });
  });

  describe('exact', () => {
    it('matches the whole value, %, _ and \\ as plain characters, without case unless asked', async () => {
      expect(
        await users(['search.primaryEmail', `ALICE.${marker}@EXAMPLE.COM`], ['mode.primaryEmail', 'exact']),
      ).to.deep.equal([alice.id]);
      expect(
        await users(
          ['search.primaryEmail', `ALICE.${marker}@EXAMPLE.COM`],
          ['mode.primaryEmail', 'exact'],
          ['isCaseSensitive', 'true'],
        ),
      ).to.deep.equal([]);
      expect(await users(['search.name', `${marker} 100% sure`], ['mode', 'exact'])).to.deep.equal([percent.id]);
      expect(await users(['search.name', `${marker} 100%`], ['mode', 'exact'])).to.deep.equal([]);
      expect(await users(['search.username', `${marker}_bob`], ['mode', 'exact'])).to.deep.equal([underscore.id]);
      expect(await users(['search.name', `${marker} back\\slash`], ['mode', 'exact'])).to.deep.equal([backslash.id]);
      expect(await users(['search.name', `élodie ${marker}`], ['mode', 'exact'])).to.deep.equal([accented.id]);
    });

    it('does not ignore trailing spaces, case-sensitive or not', async () => {
      for (const isCaseSensitive of ['true', 'false']) {
        expect(
          await users(['search.name', `${marker} padded `], ['mode', 'exact'], ['isCaseSensitive', isCaseSensitive]),
        ).to.deep.equal([]);
        expect(
          await users(['search.name', `${marker} padded`], ['mode', 'exact'], ['isCaseSensitive', isCaseSensitive]),
        ).to.deep.equal([padded.id]);
      }
    });

    it('takes several values of one field as alternatives', async () => {
      expect(
        await users(
          ['search.username', `${marker}_alice`],
          ['search.username', `${marker}_malice`],
          ['mode.username', 'exact'],
        ),
      ).to.have.members([alice.id, malice.id]);
    });
  });

  it('joins the search parameters with or (default) or and (joint, jointMode)', async () => {
    const both: Array<[string, string]> = [
      ['search.username', `${marker}%`],
      ['search.primaryEmail', `alice.%`],
    ];
    expect(await users(...both, ['joint', 'and'])).to.deep.equal([alice.id]);
    expect(await users(...both, ['jointMode', 'and'])).to.deep.equal([alice.id]);
    expect(await users(...both)).to.have.members([alice.id, malice.id, underscore.id, lookalike.id]);
    expect(await users(...both, ['joint', 'or'])).to.have.members([alice.id, malice.id, underscore.id, lookalike.id]);
    // A field's mode overrides the mode of every field.
    expect(
      await users(
        ['search.username', `${marker}_alice`],
        ['search.name', 'Alice'],
        ['mode', 'exact'],
        ['mode.username', 'like'],
        ['joint', 'and'],
      ),
    ).to.deep.equal([alice.id]);
  });

  it('combines with the list’s own filters and paging', async () => {
    const page = await get('users', [
      ['search.username', `${marker}%`],
      ['page', '1'],
      ['page_size', '2'],
    ]);
    expect(page.statusCode).to.equal(200);
    expect(page.body).to.have.lengthOf(2);
    expect(page.headers['total-number']).to.equal('4');
  });

  describe('what a list does not support is refused, never ignored', () => {
    const refusals: Array<{ query: Array<[string, string]>; parameter: string }> = [
      { query: [['search.password', 'x']], parameter: 'search.password' },
      { query: [['search.name.first', 'x']], parameter: 'search.name.first' },
      { query: [['mode.customData', 'exact']], parameter: 'mode.customData' },
      { query: [['filter', 'x']], parameter: 'filter' },
      {
        query: [
          ['search.primaryEmail', '%'],
          ['mode.primaryEmail', 'similar_to'],
        ],
        parameter: 'mode.primaryEmail',
      },
      {
        query: [
          ['search', '.*'],
          ['mode', 'posix'],
        ],
        parameter: 'mode',
      },
      {
        query: [
          ['search', '%a%'],
          ['joint', 'xor'],
        ],
        parameter: 'joint',
      },
      {
        query: [
          ['search', '%a%'],
          ['isCaseSensitive', 'maybe'],
        ],
        parameter: 'isCaseSensitive',
      },
      { query: [['search.username', '']], parameter: 'search.username' },
      {
        query: [
          ['search.username', 'a%'],
          ['search.username', 'b%'],
        ],
        parameter: 'search.username',
      },
      { query: [['search.name', 'ends with \\']], parameter: 'search.name' },
    ];
    for (const { query, parameter } of refusals) {
      it(`${new URLSearchParams(query).toString()} → 400 naming ${parameter}`, async () => {
        expectRefused(await get('users', query), parameter);
      });
    }
  });

  describe('every list that searches', () => {
    let role: Entity & { name: string };
    let machineRole: Entity & { name: string };
    let application: Entity & { name: string };
    let resource: Entity;
    let scope: Entity & { name: string };
    let organization: Entity & { name: string };
    let organizationRole: Entity & { name: string };
    let organizationScope: Entity & { name: string };

    const created = async <T>(path: string, json: Record<string, unknown>, status = 200): Promise<T> => {
      const response = await service.api.post<T>(path, { json });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(status);
      return response.body;
    };

    before(async () => {
      role = await created('roles', { name: `${marker}-Role`, description: 'Reads 100% of it.' });
      machineRole = await created('roles', { name: `${marker}-Machine`, description: 'M2M', type: 'MachineToMachine' });
      application = await created('applications', { name: `${marker}-App`, type: 'MachineToMachine' });
      resource = await created('resources', { name: marker, indicator: `https://${marker}.example.com` }, 201);
      scope = await created(`resources/${resource.id}/scopes`, { name: `read:${marker}` }, 201);
      await created(`resources/${resource.id}/scopes`, { name: `write:${marker}` }, 201);
      await created(`roles/${role.id}/scopes`, { scopeIds: [scope.id] }, 201);
      await created(`roles/${role.id}/users`, { userIds: [alice.id, malice.id] }, 201);
      await created(`roles/${machineRole.id}/applications`, { applicationIds: [application.id] }, 201);
      organization = await created('organizations', { name: `${marker} Org` }, 201);
      organizationRole = await created('organization-roles', { name: `${marker}-org-role` }, 201);
      organizationScope = await created('organization-scopes', { name: `${marker}:org` }, 201);
    });

    const lists = () => [
      { path: 'roles', field: 'name', value: `${marker.toUpperCase()}-ROLE`, expected: role.id },
      { path: `users/${alice.id}/roles`, field: 'name', value: `${marker}-role`, expected: role.id },
      { path: `roles/${role.id}/users`, field: 'primaryEmail', value: `alice.${marker}@%`, expected: alice.id },
      { path: `roles/${role.id}/scopes`, field: 'name', value: `read:%`, expected: scope.id },
      { path: `resources/${resource.id}/scopes`, field: 'name', value: `READ:${marker}`, expected: scope.id },
      { path: 'applications', field: 'name', value: `${marker}-app`, expected: application.id },
      { path: `roles/${machineRole.id}/applications`, field: 'name', value: `%-App`, expected: application.id },
      { path: `applications/${application.id}/roles`, field: 'name', value: `${marker}-m%`, expected: machineRole.id },
      { path: 'organizations', field: 'name', value: `${marker} org`, expected: organization.id },
      { path: 'organization-roles', field: 'name', value: `${marker}-ORG-role`, expected: organizationRole.id },
      { path: 'organization-scopes', field: 'name', value: `${marker}:%`, expected: organizationScope.id },
    ];

    it('takes search.<field>, mode, joint and isCaseSensitive', async () => {
      for (const { path, field, value, expected } of lists()) {
        expect(await ids(path, [[`search.${field}`, value]]), path).to.deep.equal([expected]);
        expect(await ids(path, [['search', value]]), path).to.deep.equal([expected]);
        expect(await ids(path, [[`search.${field}`, `${value}x`]]), path).to.deep.equal([]);
        expect(
          await ids(path, [
            [`search.${field}`, value],
            ['search.id', expected],
            ['mode.id', 'exact'],
            ['joint', 'and'],
          ]),
          path,
        ).to.deep.equal([expected]);
      }
      expect(await ids('roles', [['search.description', '%100\\%%']])).to.deep.equal([role.id]);
      expect(
        await ids('roles', [
          ['search.name', `${marker}-role`],
          ['isCaseSensitive', 'true'],
        ]),
      ).to.deep.equal([]);
    });

    it('refuses an unknown field, mode or parameter', async () => {
      for (const { path } of lists()) {
        expectRefused(await get(path, [['search.secret', 'x']]), 'search.secret');
        expectRefused(
          await get(path, [
            ['search', '%x%'],
            ['mode', 'similar_to'],
          ]),
          'mode',
        );
        expectRefused(await get(path, [['include', 'everything']]), 'include');
      }
    });

    it('keeps q, the organizations’ keyword (plain text, contained)', async () => {
      expect(await ids('organizations', [['q', `${marker} O`]])).to.deep.equal([organization.id]);
      expect(await ids('organization-roles', [['q', `${marker}-org`]])).to.deep.equal([organizationRole.id]);
      expect(await ids('organization-scopes', [['q', `${marker}:`]])).to.deep.equal([organizationScope.id]);
      expect(await ids('organization-scopes', [['q', `${marker}%`]])).to.deep.equal([]);
    });
  });

  describe('through @logto/api', () => {
    it('finds the user by email with search_params, then deletes that user only', async () => {
      const apiClient = logtoManagementClient(service);
      const victim = await createUser({ primaryEmail: `Carol.${marker}@example.com` });
      const bystander = await createUser({ primaryEmail: `xcarol.${marker}@example.com` });

      const found = await apiClient.GET('/api/users', {
        params: {
          query: {
            search_params: { 'search.primaryEmail': `carol.${marker}@example.com`, 'mode.primaryEmail': 'exact' },
          },
        },
      });
      expect(found.response.status, JSON.stringify(found.error)).to.equal(200);
      expect(found.data?.map(({ id }) => id)).to.deep.equal([victim.id]);

      const deleted = await apiClient.DELETE('/api/users/{userId}', { params: { path: { userId: victim.id } } });
      expect(deleted.response.status).to.equal(204);
      expect(await users(['search.primaryEmail', `%carol.${marker}@example.com`])).to.deep.equal([bystander.id]);
    });

    it('lists with search_params on the other lists, and is refused an unknown key', async () => {
      const apiClient = logtoManagementClient(service);
      const roles = await apiClient.GET('/api/roles', {
        params: { query: { search_params: { search: `${marker}-role`, isCaseSensitive: 'false' } } },
      });
      expect(roles.response.status, JSON.stringify(roles.error)).to.equal(200);
      expect(roles.data?.map(({ name }) => name)).to.deep.equal([`${marker}-Role`]);

      const refused = await apiClient.GET('/api/applications', {
        params: { query: { search_params: { 'search.secret': 'x' } } },
      });
      expect(refused.response.status).to.equal(400);
      // The client types no error body for this operation; it parsed the JSON one.
      const error = refused.error as unknown as ErrorBody;
      expect(error.code).to.equal('request.invalid_input');
      expect(error.message).to.include('search.secret');
    });
  });
});
