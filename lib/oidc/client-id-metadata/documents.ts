import { type ClientMetadata, errors } from 'oidc-provider';

import type { Config } from '../../config/env.ts';
import type { Logger } from '../../http/logger.ts';
import { GuardedGetError, guardedGetJson } from '../../http/outbound/guarded-get.ts';
import { hostAllowed, parseClientIdUrl } from './client-id-url.ts';
import { documentClientMetadata, readClientDocument } from './document.ts';

/** A fetched document is kept for its Cache-Control max-age, within these bounds (seconds). */
const cacheBounds = { min: 300, max: 86_400 };
/** A document that could not be had, or was refused, is asked for again only after this (seconds). */
const failureSeconds = 60;
/**
 * How a document is fetched: https only (the URL's rules require it already), 3 s (the person waits on
 * the authorization request), 5 KB (the draft's suggested cap: a client's metadata is small, and a
 * large answer is someone's abuse), and only a JSON content type.
 */
const fetchLimits = {
  subject: "the client's metadata document address",
  timeoutMs: 3000,
  sizeLimit: 5 * 1024,
  httpsOnly: true,
  requireJsonType: true,
};
/**
 * What memory holds: up to `clients` documents that gave a client (the least recently used go first),
 * at most `clientsPerHost` of them from one host, so that one host serving many valid documents
 * cannot push out the clients of others; refusals are kept apart (`refusals`, the oldest go first),
 * so a flood of bad URLs never evicts a working client.
 */
const cacheSize = { clients: 1000, clientsPerHost: 100, refusals: 1000 };
/**
 * Fetches this instance makes in a minute, from one host and in all: each distinct URL costs one
 * fetch, so without a bound anyone could make us fetch as fast as they can send authorization
 * requests. Over the bound a new URL is refused (not remembered: it may be asked for a minute later);
 * clients already in memory are served as before.
 */
const fetchBudget = { windowMs: 60_000, perHost: 30, total: 120 };

/** What a URL gave: the client, or why not (the invalid_client description). */
type Entry = { until: number; client?: ClientMetadata; refusal?: string };

export type DocumentSettings = Config['clientIdMetadataDocuments'] & {
  allowPrivateTargets: boolean;
  /** The clock, in milliseconds (tests move it). */
  now?: () => number;
};

/** Seconds a document may be kept: its max-age (none, no-store or no-cache: the minimum), clamped. */
function keepSeconds(cacheControl = ''): number {
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)/i.exec(cacheControl)?.[1];
  const asked = maxAge === undefined || /(?:^|,)\s*no-(store|cache)\b/i.test(cacheControl) ? 0 : Number(maxAge);
  return Math.min(cacheBounds.max, Math.max(cacheBounds.min, asked));
}

/**
 * Clients named by a URL (Client ID Metadata Documents): the document at the URL, fetched through
 * the SSRF guard when its host is allowed, read as a public client and kept in this instance's
 * memory. Lookups of one URL at once share one fetch; a failure is remembered briefly, so that
 * requests naming a broken or hostile URL do not each make us fetch it.
 */
export class ClientIdMetadataDocuments {
  /** Clients by URL, least recently used first. */
  readonly #clients = new Map<string, Entry>();
  readonly #clientsPerHost = new Map<string, number>();
  readonly #refusals = new Map<string, Entry>();
  readonly #fetching = new Map<string, Promise<Entry>>();
  /** Fetches started in the current budget window, by host. */
  #fetched = { since: 0, total: 0, byHost: new Map<string, number>() };
  readonly #now: () => number;

  private readonly settings: DocumentSettings;
  private readonly logger: Logger;

  constructor(settings: DocumentSettings, logger: Logger) {
    this.settings = settings;
    this.logger = logger;
    this.#now = settings.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** The client the URL names; else the provider's invalid_client saying why. */
  async client(clientId: string): Promise<ClientMetadata> {
    const url = this.#allowedUrl(clientId);
    let entry = this.#clients.get(clientId) ?? this.#refusals.get(clientId);
    if (entry?.client && entry.until > this.#now()) {
      // Used again: the last to go.
      this.#clients.delete(clientId);
      this.#clients.set(clientId, entry);
    } else if (!entry || entry.until <= this.#now()) {
      entry = await this.#fetchOnce(clientId, url);
    }
    if (!entry.client) {
      throw new errors.InvalidClient(entry.refusal);
    }
    return entry.client;
  }

  /** Whether a URL may name a client here at all (the feature is on and its host is allowed); nothing is fetched. */
  accepts(clientId: string): boolean {
    const url = parseClientIdUrl(clientId);
    return this.settings.enabled && typeof url !== 'string' && this.#hostRefusal(url) === undefined;
  }

  #allowedUrl(clientId: string): URL {
    if (!this.settings.enabled) {
      throw new errors.InvalidClient(
        'the client_id is a URL (a Client ID Metadata Document), and this server does not accept those',
      );
    }
    const url = parseClientIdUrl(clientId);
    if (typeof url === 'string') {
      throw new errors.InvalidClient(url);
    }
    const refusal = this.#hostRefusal(url);
    if (refusal) {
      throw new errors.InvalidClient(refusal);
    }
    return url;
  }

  /**
   * Why the URL's host may not name a client, if it may not. A query string makes endless distinct
   * URLs of one document, so it is allowed only on a host the operator named exactly (not through
   * `*` or `*.suffix`): one that is known to serve its documents that way.
   */
  #hostRefusal(url: URL): string | undefined {
    if (!hostAllowed(url.hostname, this.settings.hosts)) {
      return `the client_id's host ${url.hostname} is not among the hosts this server accepts client metadata documents from`;
    }
    if (url.search !== '' && !this.settings.hosts.includes(url.hostname)) {
      return `a client_id URL may have a query string only on a host named in CLIENT_ID_METADATA_DOCUMENT_HOSTS (${url.hostname} is not)`;
    }
    return undefined;
  }

  #fetchOnce(clientId: string, url: URL): Promise<Entry> {
    let pending = this.#fetching.get(clientId);
    if (!pending) {
      this.#spendBudget(url.hostname);
      pending = this.#load(clientId, url).finally(() => this.#fetching.delete(clientId));
      this.#fetching.set(clientId, pending);
    }
    return pending;
  }

  /** Counts a fetch from `host` against this minute's budget; over it, refuses (nothing is remembered). */
  #spendBudget(host: string): void {
    const now = this.#now();
    if (now - this.#fetched.since >= fetchBudget.windowMs) {
      this.#fetched = { since: now, total: 0, byHost: new Map() };
    }
    const fromHost = this.#fetched.byHost.get(host) ?? 0;
    if (fromHost >= fetchBudget.perHost || this.#fetched.total >= fetchBudget.total) {
      this.logger.warn({ host }, 'client metadata document fetch budget spent');
      throw new errors.InvalidClient(
        `too many client metadata documents were fetched${fromHost >= fetchBudget.perHost ? ` from ${host}` : ''} in the last minute; try again in a minute`,
      );
    }
    this.#fetched.byHost.set(host, fromHost + 1);
    this.#fetched.total += 1;
  }

  async #load(clientId: string, url: URL): Promise<Entry> {
    let entry: Entry;
    try {
      const fetched = await guardedGetJson(url, {
        ...fetchLimits,
        allowPrivateTargets: this.settings.allowPrivateTargets,
      });
      const document = readClientDocument(fetched.body, clientId);
      entry =
        typeof document === 'string'
          ? this.#refused(`the client_id metadata document is not valid: ${document}`)
          : { until: this.#now() + keepSeconds(fetched.cacheControl) * 1000, client: documentClientMetadata(document) };
    } catch (error) {
      if (!(error instanceof GuardedGetError)) {
        throw error;
      }
      entry = this.#refused(`the client_id metadata document could not be fetched: ${error.message}`);
    }
    if (entry.refusal) {
      this.logger.info({ clientId, reason: entry.refusal }, 'client metadata document refused');
    }
    this.#remember(clientId, url.hostname, entry);
    return entry;
  }

  #remember(clientId: string, host: string, entry: Entry): void {
    this.#forget(clientId, host);
    if (!entry.client) {
      this.#refusals.set(clientId, entry);
      if (this.#refusals.size > cacheSize.refusals) {
        this.#refusals.delete(this.#refusals.keys().next().value as string);
      }
      return;
    }
    if ((this.#clientsPerHost.get(host) ?? 0) >= cacheSize.clientsPerHost) {
      const oldestOfHost = [...this.#clients.keys()].find((id) => new URL(id).hostname === host);
      this.#forget(oldestOfHost as string, host);
    }
    this.#clients.set(clientId, entry);
    this.#clientsPerHost.set(host, (this.#clientsPerHost.get(host) ?? 0) + 1);
    if (this.#clients.size > cacheSize.clients) {
      const oldest = this.#clients.keys().next().value as string;
      this.#forget(oldest, new URL(oldest).hostname);
    }
  }

  #forget(clientId: string, host: string): void {
    this.#refusals.delete(clientId);
    if (this.#clients.delete(clientId)) {
      const left = (this.#clientsPerHost.get(host) ?? 1) - 1;
      if (left === 0) {
        this.#clientsPerHost.delete(host);
      } else {
        this.#clientsPerHost.set(host, left);
      }
    }
  }

  #refused(refusal: string): Entry {
    return { until: this.#now() + failureSeconds * 1000, refusal };
  }
}
