import { expect } from 'chai';

import { startService, type TestService } from './support/service.ts';

describe('smoke', () => {
  let service: TestService;
  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  it('answers status and lists the management API resource', async () => {
    expect((await service.http.get('api/status')).statusCode).to.equal(204);
    const response = await service.api.get('resources');
    expect(response.statusCode).to.equal(200);
    expect(response.body).to.be.an('array').with.length(1);
  });
});
