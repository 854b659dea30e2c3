import { expect } from 'chai';

import { expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { HookEvents } from '../support/hook-events.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import { Browser } from './browser.ts';

/** Shared steps of the Experience API tests: a sign-in page's calls, and what an admin reads back. */

export const redirectUri = 'http://app.test/callback';

export type InteractionEvent = 'SignIn' | 'Register' | 'ForgotPassword';
export type Identifier = { type: 'username' | 'email' | 'phone'; value: string };
export type Message = {
  id: string;
  recipient: string;
  type: 'email' | 'phone';
  purpose: string;
  code: string;
  createdAt: number;
};

export const newEmail = (prefix = 'user') => `${unique(prefix)}@example.com`;

/** What a sign-in test talks to: the service, a receiver of all its webhook events, and a first-party SPA. */
export type SignInSetting = { service: TestService; events: HookEvents; spa: { id: string }; stop(): Promise<void> };

/** Starts the service (webhook retries after 0.2 s, so failed deliveries settle fast) with its receiver and SPA. */
export async function startSignInSetting(): Promise<SignInSetting> {
  const service = await startService({ env: { HOOKS_RETRY_SCHEDULE: '0.2,0.2' } });
  let events: HookEvents | undefined;
  const stop = async () => {
    await events?.stop();
    await service.stop();
  };
  try {
    events = await HookEvents.start(service);
    return { service, events, spa: await createSpa(service), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A first-party SPA with the test redirect URI, for /oidc/auth. */
export async function createSpa(service: TestService): Promise<{ id: string }> {
  return createApplication(service, 'SPA', {
    oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
  });
}

/** A browser at the sign-in page with an interaction, and (unless `event` is null) an experience started. */
export async function openExperience(
  service: TestService,
  clientId: string,
  event: InteractionEvent | null = 'SignIn',
): Promise<Browser> {
  const browser = new Browser(service);
  const { location } = await browser.authorize(clientId, redirectUri);
  expect(location).to.equal('/sign-in');
  if (event) {
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: event }), 204);
  }
  return browser;
}

/** A user made through the management API. */
export async function createUser(
  service: TestService,
  body: { username?: string; primaryEmail?: string; password?: string },
) {
  const response = await service.api.post('users', { json: body });
  expectStatus(response, 200);
  return response.body as { id: string; username: string | null; primaryEmail: string | null };
}

/** The development store's messages to `recipient`, newest first. */
export async function messagesTo(service: TestService, recipient: string): Promise<Message[]> {
  const response = await service.api.get<Message[]>('verification-messages', { searchParams: { recipient } });
  expectStatus(response, 200);
  return response.body;
}

export async function latestCode(service: TestService, recipient: string): Promise<string> {
  const [message] = await messagesTo(service, recipient);
  expect(message, `no message to ${recipient}`).to.not.equal(undefined);
  return message.code;
}

/** A six-digit code that is not `code`. */
export const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

export const passwordVerification = (browser: Browser, identifier: Identifier, password: string) =>
  browser.call('post', 'api/experience/verification/password', { identifier, password });

export const sendCode = (browser: Browser, email: string, interactionEvent: InteractionEvent) =>
  browser.call('post', 'api/experience/verification/verification-code', {
    identifier: { type: 'email', value: email },
    interactionEvent,
  });

export const verifyCode = (browser: Browser, email: string, verificationId: string, code: string) =>
  browser.call('post', 'api/experience/verification/verification-code/verify', {
    identifier: { type: 'email', value: email },
    verificationId,
    code,
  });

/** Sends a code to `email` and verifies it with the code the development store holds; returns the verification id. */
export async function verifyEmail(
  service: TestService,
  browser: Browser,
  email: string,
  event: InteractionEvent,
): Promise<string> {
  const sent = await sendCode(browser, email, event);
  expectStatus(sent, 200);
  const verified = await verifyCode(browser, email, sent.body.verificationId, await latestCode(service, email));
  expectStatus(verified, 200);
  expect(verified.body.verificationId).to.equal(sent.body.verificationId);
  return verified.body.verificationId;
}

export const identify = (browser: Browser, body: Record<string, unknown> = {}) =>
  browser.call('post', 'api/experience/identification', body);

/** Submits a finished sign-in and follows it back to the application: the URL it lands on carries the code. */
export async function submitToApplication(browser: Browser): Promise<URL> {
  const submitted = await browser.call('post', 'api/experience/submit');
  expectStatus(submitted, 200);
  expect(submitted.body.redirectTo).to.match(/\/oidc\/auth\//);
  const back = await browser.followToApplication(submitted.body.redirectTo);
  expect(back.origin + back.pathname).to.equal(redirectUri);
  expect(back.searchParams.get('code')).to.be.a('string');
  return back;
}

/** A whole password sign-in in a fresh browser, returning the status the password step answered. */
export async function signInWithPassword(
  service: TestService,
  clientId: string,
  identifier: Identifier,
  password: string,
): Promise<HttpResponse> {
  const browser = await openExperience(service, clientId);
  const verification = await passwordVerification(browser, identifier, password);
  if (verification.statusCode === 200) {
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    await submitToApplication(browser);
  }
  return verification;
}
