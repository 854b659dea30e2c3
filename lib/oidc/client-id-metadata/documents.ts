import { errors, type ClientMetadata } from 'oidc-provider';

import type { Config } from '../../config/env.ts';
import { GuardedGetError, guardedGetJson } from '../../http/guarded-get.ts';
import type { Logger } from '../../http/logger.ts';
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
/** At most this many URLs are remembered; the oldest go first (only allowed hosts get this far). */
const maxEntries = 1000;

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
  readonly #entries = new Map<string, Entry>();
  readonly #fetching = new Map<string, Promise<Entry>>();
  readonly #now: () => number;

  constructor(
    private readonly settings: DocumentSettings,
    private readonly logger: Logger,
  ) {
    this.#now = settings.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.settings.enabled;
  }

  /** The client the URL names; else the provider's invalid_client saying why. */
  async client(clientId: string): Promise<ClientMetadata> {
    const url = this.#allowedUrl(clientId);
    let entry = this.#entries.get(clientId);
    if (!entry || entry.until <= this.#now()) {
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
    return this.settings.enabled && typeof url !== 'string' && hostAllowed(url.hostname, this.settings.hosts);
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
    if (!hostAllowed(url.hostname, this.settings.hosts)) {
      throw new errors.InvalidClient(
        `the client_id's host ${url.hostname} is not among the hosts this server accepts client metadata documents from`,
      );
    }
    return url;
  }

  #fetchOnce(clientId: string, url: URL): Promise<Entry> {
    let pending = this.#fetching.get(clientId);
    if (!pending) {
      pending = this.#load(clientId, url).finally(() => this.#fetching.delete(clientId));
      this.#fetching.set(clientId, pending);
    }
    return pending;
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
    this.#entries.delete(clientId);
    this.#entries.set(clientId, entry);
    if (this.#entries.size > maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return entry;
  }

  #refused(refusal: string): Entry {
    return { until: this.#now() + failureSeconds * 1000, refusal };
  }
}
