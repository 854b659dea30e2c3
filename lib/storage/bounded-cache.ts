/**
 * An in-memory cache bounded by entry count AND by bytes (the caller says what an entry weighs), the
 * least recently used entry going first. A count alone does not bound memory when entries are as
 * large as their callers make them (a 40 KB token as a key). Per instance; nothing is shared.
 */
export class BoundedCache<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  #bytes = 0;

  private readonly limits: { maxEntries: number; maxBytes: number };

  constructor(limits: { maxEntries: number; maxBytes: number }) {
    this.limits = limits;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) {
      return undefined;
    }
    // Map keeps insertion order: moving the entry to the end makes the first one the least recently used.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps the value unless it alone outweighs the limit; evicts what no longer fits. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.limits.maxBytes) {
      return;
    }
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.limits.maxEntries && this.#bytes <= this.limits.maxBytes) {
        break;
      }
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}
