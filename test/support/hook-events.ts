import { expect } from 'chai';
import type { Knex } from 'knex';

import { hookEvents } from '../../lib/hooks/events.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { Receiver } from '../hooks/receiver.ts';
import { eventually } from './eventually.ts';
import type { Json, TestService } from './service.ts';

export type Payload = Record<string, Json>;

const sorted = (values: string[]) => [...values].sort();

/**
 * A real webhook receiver subscribed to every event of a service, to check which events an end-user
 * action causes. Start the service with a short `HOOKS_RETRY_SCHEDULE`.
 */
export class HookEvents {
  private readonly receiver: Receiver;
  private readonly db: Knex;
  private readonly hookId: string;

  private constructor(receiver: Receiver, db: Knex, hookId: string) {
    this.receiver = receiver;
    this.db = db;
    this.hookId = hookId;
  }

  static async start(service: TestService): Promise<HookEvents> {
    const receiver = await Receiver.start();
    const created = await service.api.post('hooks', {
      json: { name: 'all events', events: [...hookEvents], config: { url: receiver.url } },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(201);
    return new HookEvents(receiver, openDatabase(service.config.dbUrl), created.body.id);
  }

  /** Waits until the outbox holds nothing undelivered for the hook. */
  private async settle(): Promise<void> {
    await eventually(
      async () => {
        const [row] = await this.db('hook_deliveries')
          .where({ hook_id: this.hookId })
          .whereIn('status', ['pending', 'delivering'])
          .count({ n: '*' });
        return Number(row.n) === 0;
      },
      10_000,
      'every delivery of the hook final',
    );
  }

  /**
   * Runs `action` and asserts that exactly `expected` events (each as often as listed, any order)
   * reached the receiver because of it; returns the result and the payloads by event.
   */
  async expect<T>(
    expected: string[],
    action: () => Promise<T>,
  ): Promise<{ result: T; payloads: Record<string, Payload[]> }> {
    await this.settle();
    const before = this.receiver.requests.length;
    const result = await action();
    await this.settle();
    const payloads = this.receiver.requests.slice(before).map((request) => JSON.parse(request.body) as Payload);
    const events = payloads.map((payload) => String(payload.event));
    expect(sorted(events), `events: ${JSON.stringify(events)}`).to.deep.equal(sorted(expected));
    for (const payload of payloads) {
      expect(payload.hookId).to.equal(this.hookId);
    }
    const byEvent = Object.fromEntries(
      events.map((event) => [event, payloads.filter((payload) => String(payload.event) === event)]),
    );
    return { result, payloads: byEvent };
  }

  async stop(): Promise<void> {
    await this.db.destroy();
    await this.receiver.close();
  }
}
