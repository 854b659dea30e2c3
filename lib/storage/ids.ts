import { customAlphabet } from 'nanoid';

const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Entity ids: 21 lowercase alphanumerics, as Logto's, so they are safe in URLs and case-insensitive stores. */
export const generateId = customAlphabet(alphabet, 21);

let lastSequence = 0;

/**
 * Microseconds since the epoch, strictly increasing in this process. Two events about one entity
 * commit one after the other (the change locks the entity's row), so the later one's sequence,
 * taken inside its transaction, is the larger, from whichever instance (clocks in step).
 */
export function nextSequence(now = Date.now()): number {
  lastSequence = Math.max(now * 1000, lastSequence + 1);
  return lastSequence;
}

/**
 * The same 21 characters, sorting in the order they are made here (`nextSequence` in base 36, then
 * 10 random characters), for rows written in bulk and in time order: the event log (whose (created_at,
 * id) order replay follows, so two events of one millisecond replay in commit order) and the audit log.
 * Each insert lands at the end of the primary key's B-tree instead of on a random page: half the CPU
 * of an audit insert on SQLite, and no page splits in InnoDB's clustered index as the table grows.
 * The time is in the row anyway (`created_at`), so the id tells nobody more.
 */
export const generateTimeOrderedId = (): string =>
  nextSequence().toString(36).padStart(11, '0') + generateId().slice(0, 10);

/** Client secrets and signing keys for webhooks: 32 characters, about 165 bits. */
export const generateSecret = customAlphabet(`${alphabet}ABCDEFGHIJKLMNOPQRSTUVWXYZ`, 32);
