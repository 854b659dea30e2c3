/**
 * An agent (an AI tool runner, a scheduler) doing a task for a user through API A. It holds the
 * user's token for API A (handed over by the front end the user signed in to) and gets its own by
 * client credentials, for API A too, and sends both: the user's as `Authorization: Bearer`, its own
 * in API A's `Actor-Token` header. API A then names it as the actor when it exchanges the user's
 * token, so that API B sees the user (`sub`), API A (`client_id`) and the agent (`act`) — and the
 * user's front end can say, by its delegation policy, which agents may act for its users.
 * It prints API A's answer (never a token); the exit code is 0 on a 2xx answer, 1 otherwise.
 *
 *   ISSUER=http://localhost:3001/oidc AGENT_CLIENT_ID=... AGENT_CLIENT_SECRET=... \
 *   API_A_URL=http://localhost:4001 API_A_INDICATOR=https://api-a.example.com USER_TOKEN=... \
 *     node --import tsx examples/agent/agent.ts
 */
import * as client from 'openid-client';

import { actorTokenHeader } from '../api-a/server.ts';

export type AgentOptions = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  apiAUrl: string;
  /** API A's resource indicator: the agent's own token is for API A, the API it calls. */
  apiAIndicator: string;
};

/** `GET /my-orders` at API A for the user whose token this is, the agent naming itself; API A's answer. */
export async function callApiAForUser(
  options: AgentOptions,
  userToken: string,
): Promise<{ status: number; body: unknown }> {
  const config = await client.discovery(new URL(options.issuer), options.clientId, options.clientSecret, undefined, {
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: allowed for a local http issuer
    execute: options.issuer.startsWith('http://') ? [client.allowInsecureRequests] : [],
  });
  const own = await client.clientCredentialsGrant(config, { resource: options.apiAIndicator });
  const response = await fetch(`${options.apiAUrl}/my-orders`, {
    headers: { authorization: `Bearer ${userToken}`, [actorTokenHeader]: own.access_token },
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const env = process.env;
  if (!env.USER_TOKEN) {
    console.error("USER_TOKEN (the user's access token for API A) is required");
    process.exit(1);
  }
  const { status, body } = await callApiAForUser(
    {
      issuer: env.ISSUER ?? 'http://localhost:3001/oidc',
      clientId: env.AGENT_CLIENT_ID ?? '',
      clientSecret: env.AGENT_CLIENT_SECRET ?? '',
      apiAUrl: env.API_A_URL ?? 'http://localhost:4001',
      apiAIndicator: env.API_A_INDICATOR ?? 'https://api-a.example.com',
    },
    env.USER_TOKEN,
  );
  console.log(status, JSON.stringify(body));
  process.exitCode = status >= 200 && status < 300 ? 0 : 1;
}
