import { expect } from 'chai';
import type { Knex } from 'knex';

import { type ErrorCode, errorCodes } from '../../lib/http/error-codes.ts';
import { RequestError } from '../../lib/http/errors.ts';
import { openDatabase, quotedName, refuseUpdates } from '../support/database.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

type LogLine = { msg: string; logId?: string; path?: string; err?: { message: string } };

const errorStatus = (status: number) => Number.isInteger(status) && status >= 400 && status <= 599;

describe('the error catalogue', () => {
  it('gives every code an error status and a message', () => {
    const codes = Object.keys(errorCodes) as ErrorCode[];
    expect(codes.length).to.be.above(80);
    for (const code of codes) {
      const entry: { status: number; alsoStatus?: number; message: unknown } = errorCodes[code];
      expect(code, code).to.match(/^(unknown|[a-z_]+(\.[a-z_]+)+)$/);
      expect(errorStatus(entry.status), `${code}: status ${entry.status}`).to.equal(true);
      if (entry.alsoStatus !== undefined) {
        expect(errorStatus(entry.alsoStatus), `${code}: also ${entry.alsoStatus}`).to.equal(true);
      }
      if (typeof entry.message === 'string') {
        const error = new RequestError(code as 'hook.disabled');
        expect([error.code, error.status, error.message]).to.deep.equal([code, entry.status, entry.message]);
        expect(entry.message, code).to.match(/^\S.*\S$/);
      } else {
        expect(entry.message, code).to.be.a('function');
      }
    }
  });
});

describe('an error outside the catalogue', () => {
  let service: TestService;
  let beside: Knex;

  before(async () => {
    service = await startService({ logs: true });
    beside = openDatabase(service.config.dbUrl);
  });

  after(async () => {
    await ifSet(beside)?.destroy();
    await ifSet(service)?.stop();
  });

  const failures = (): LogLine[] =>
    service
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.msg === 'request failed');

  it('is a 500 `unknown` that tells the client only a log id, which the log line of the failure carries', async () => {
    const resource = await service.api.post('resources', {
      json: { name: 'Failing API', indicator: 'https://failing.example.com' },
    });
    expect(resource.statusCode).to.equal(201);
    await refuseUpdates(beside, 'resources');

    const responses = [
      await service.api.patch(`resources/${resource.body.id}`, { json: { name: 'Renamed' } }),
      await service.api.patch(`resources/${resource.body.id}`, { json: { name: 'Renamed again' } }),
    ];
    const logIds = responses.map((response) => String(response.body.logId));
    for (const [index, response] of responses.entries()) {
      expect(response.statusCode).to.equal(500);
      expect(response.body).to.deep.equal({ code: 'unknown', message: 'Internal server error.', logId: logIds[index] });
      expect(logIds[index]).to.match(/^[\w-]{8}$/);
      // Nothing of the failure itself: not the database's words, not the statement, not the table.
      expect(JSON.stringify(response.body)).to.not.match(/refused|update|resources|sql/i);
    }
    expect(logIds[0]).to.not.equal(logIds[1]);

    const logged = failures();
    expect(logged.map((line) => line.logId)).to.deep.equal(logIds);
    for (const line of logged) {
      expect(line.path).to.equal(`/api/resources/${resource.body.id}`);
      // The log line has what the body lacks: the failed statement (with placeholders, not values).
      expect(line.err?.message).to.contain(`update ${quotedName('resources')} set`);
    }
  });

  it('leaves the errors of the catalogue as they were: their code, status, message and data, no log id', async () => {
    const response = await service.api.get('resources/no-such-resource');
    expect(response.statusCode).to.equal(404);
    expect(response.body).to.deep.equal({
      code: 'entity.not_exists_with_id',
      message: 'The resource with ID `no-such-resource` does not exist.',
      data: { name: 'resource', id: 'no-such-resource' },
    });
  });
});
