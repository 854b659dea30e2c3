import type { Context } from 'koa';

import type { ExperienceSession } from '../session.ts';

/**
 * One request to an experience endpoint as it passes through the endpoint's steps: what it sent,
 * the interaction it belongs to, and what the steps before found. A step that answers sets
 * `answer`; one that refuses throws its `RequestError`.
 */
export type Flow<Body, Answer> = {
  ctx: Context;
  body: Body;
  session: ExperienceSession;
  answer?: { value: Answer };
};

/** A named check, look-up or change; the endpoint's file lists them in the order they run. */
export type Step<F> = (flow: F) => Promise<void> | void;

/**
 * Runs `steps` in order until one answers (oidc-provider composes its token endpoint the same way,
 * lib/actions/token.js); an endpoint whose last step does not answer answers with its status alone.
 */
export async function runSteps<F extends Flow<unknown, unknown>>(
  steps: Step<F>[],
  flow: NoInfer<F>,
): Promise<NonNullable<F['answer']>['value'] | undefined> {
  for (const step of steps) {
    await step(flow);
    if (flow.answer) {
      return flow.answer.value;
    }
  }
  return undefined;
}

/** What an earlier step of the same endpoint found: missing, a step runs out of order (a defect, 500). */
export function loaded<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new Error(`an experience step ran before the step that finds ${what}`);
  }
  return value;
}
