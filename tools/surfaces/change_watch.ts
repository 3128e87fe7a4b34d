/**
 * Appends by other processes on the same database, told to this connection's subscribers.
 * While the client holds at least one resource subscription, the store's change counter (the
 * log's highest sequence number: one indexed read) is polled every second; when it moved, each
 * subscribed session's event count is read, and a session whose count changed without this
 * connection having told the client already gets `notifications/resources/updated`. With no
 * subscription nothing polls. So a change made elsewhere reaches a subscriber within about a
 * second (one interval plus two small reads).
 * @module
 */
import { parseSessionLabel } from "../../engine/model/ids.ts";
import type { StoreReader } from "../../engine/model/ports.ts";

/** How often the change counter is read while anything is subscribed. */
export const CHANGE_POLL_MS = 1_000;

/** Options of {@linkcode ForeignChanges}. */
export interface ForeignChangesOptions {
  /** The subscribed URIs (read at each poll). */
  subscriptions: ReadonlySet<string>;
  /** The URI prefix of sessions (`waymark://sessions/`). */
  prefix: string;
  /** Sends `notifications/resources/updated` for a URI. */
  send(uri: string): Promise<void>;
  /** Poll interval (default {@linkcode CHANGE_POLL_MS}). */
  intervalMs?: number;
}

/** The poll of one connection: started by the first subscription, stopped by the last. */
export class ForeignChanges {
  readonly #store: StoreReader;
  readonly #options: ForeignChangesOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #counter = -1;
  #busy = false;
  readonly #counts = new Map<string, number>();
  readonly #told = new Set<string>();

  constructor(store: StoreReader, options: ForeignChangesOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** Polls while there are subscriptions; call after each subscribe and unsubscribe. */
  update(): void {
    const wanted = this.#options.subscriptions.size > 0;
    if (wanted && this.#timer === undefined) {
      this.#timer = setInterval(
        () => void this.#poll(),
        this.#options.intervalMs ?? CHANGE_POLL_MS,
      );
      void this.#poll();
    } else if (!wanted) this.stop();
  }

  /** Notes that this connection told the client about `uri` itself (no second notification). */
  told(uri: string): void {
    this.#told.add(uri);
  }

  /** Stops polling. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#counter = -1;
    this.#counts.clear();
  }

  async #poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const counter = await this.#store.changeCounter();
      const fresh = [...this.#options.subscriptions].some((uri) => !this.#counts.has(uri));
      if (counter === this.#counter && !fresh) return;
      this.#counter = counter;
      for (const uri of this.#options.subscriptions) await this.#check(uri);
    } catch {
      // a busy or failing store is asked again at the next poll
    } finally {
      this.#busy = false;
    }
  }

  async #check(uri: string): Promise<void> {
    const id = uri.startsWith(this.#options.prefix)
      ? parseSessionLabel(uri.slice(this.#options.prefix.length))
      : null;
    const count = id ? (await this.#store.getSession(id))?.eventCount ?? 0 : 0;
    const before = this.#counts.get(uri);
    this.#counts.set(uri, count);
    const toldAlready = this.#told.delete(uri);
    if (before !== undefined && before !== count && !toldAlready) {
      await this.#options.send(uri).catch(() => {});
    }
  }
}
