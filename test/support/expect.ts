import { expect } from 'chai';

/**
 * The generic assertions on an answer of the service, for every test folder. Each prints the answer's
 * status and body when it fails, so a wrong status says what the service said instead.
 */

/** What the assertions read of an answer; any client's response has it. */
type Answer = { statusCode: number; body: unknown };

/** The status and the start of the body (an HTML page would drown the assertion). */
const shown = ({ statusCode, body }: Answer) => `${statusCode} ${JSON.stringify(body)}`.slice(0, 1000);

export function expectStatus(response: Answer, status: number): void {
  expect(response.statusCode, shown(response)).to.equal(status);
}

/** An error answer of the catalogue: its status and its `code`. */
export function expectError(response: Answer, status: number, code: string): void {
  expectStatus(response, status);
  expect((response.body as { code?: unknown } | null | undefined)?.code, shown(response)).to.equal(code);
}

/** Every one of `responses` succeeded (below 300); the failed ones are listed when not. */
export function expectAllOk(responses: Answer[]): void {
  expect(responses.filter(({ statusCode }) => statusCode >= 300).map(shown)).to.deep.equal([]);
}
