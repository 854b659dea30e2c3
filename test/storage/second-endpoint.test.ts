import { expect } from 'chai';

import { freshDatabaseUrl } from '../support/database.ts';
import { startService } from '../support/service.ts';
import { consoleSignIn } from '../support/sign-in.ts';
import { ifSet } from '../support/values.ts';

/**
 * A second instance started on the same database with another ENDPOINT (a typo, a staging URL)
 * must not break the first: both keep working, each with its own issuer, management API
 * indicator and console redirect URI.
 */
describe('a second start with another ENDPOINT', () => {
  it('leaves the first instance its management tokens and its console sign-in', async () => {
    const dbUrl = await freshDatabaseUrl();
    const first = await startService({ dbUrl });
    let second: Awaited<ReturnType<typeof startService>> | undefined;
    try {
      const admin = { username: 'operator', password: 'Correct-Horse-9' };
      const created = await first.api.post('users', { json: admin });
      await first.api.post(`users/${created.body.id}/roles`, { json: { roleIds: ['console-admin'] } });

      second = await startService({ dbUrl, env: { ENDPOINT: 'http://elsewhere.test' } });
      expect(second.config.endpoint).to.not.equal(first.config.endpoint);

      // The first instance's management API still takes its own tokens (a fresh one, and the cached one).
      expect((await first.api.get('applications')).statusCode).to.equal(200);
      first.forgetToken();
      expect((await first.api.get('applications')).statusCode).to.equal(200);
      // ...and its console still signs administrators in.
      const tokens = await consoleSignIn(first, admin);
      expect(tokens.access_token).to.be.a('string');
      // The second one works with its own.
      expect((await second.api.get('applications')).statusCode).to.equal(200);
    } finally {
      await ifSet(second)?.stop();
      await first.stop();
    }
  });

  it('names a misspelled variable that looks like one of ours in a start warning', async () => {
    const service = await startService({ logs: true, env: { PROT: '4000', DB_ULR: 'sqlite:x', HOOKS_RETRIES: '1' } });
    try {
      const warnings = service
        .logs()
        .split('\n')
        .filter((line) => line.includes('"level":40'))
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(warnings).to.include('PROT is not a setting of this service: did you mean PORT?');
      expect(warnings).to.include('DB_ULR is not a setting of this service: did you mean DB_URL?');
      expect(warnings).to.include(
        'HOOKS_RETRIES is not a setting of this service (see the configuration table in README.md)',
      );
    } finally {
      await service.stop();
    }
  });
});
