/**
 * The requests of one stdio connection not yet answered. A client may write its requests and
 * close its end at once (a script, or a host that shuts down); the SDK closes the connection at
 * the end of input and drops every answer still being worked on, so the end of input is held
 * back until each request received has had its answer written. A request that only the client
 * could end (`tasks/result` waiting on a run, a call waiting on a form the client will never
 * fill) would hold it forever, so the wait gives up when no answer has been written for
 * {@linkcode STALL_MS} and says which requests were left.
 * @module
 */

/** How long the end of input waits without any answer being written before it gives up. */
export const STALL_MS = 30_000;

type Id = string | number;

/** Counts requests received and answers written, by id (a client may reuse an id). */
export class Unanswered {
  readonly #open = new Map<Id, number>();
  readonly #log?: (line: string) => void;
  readonly #stallMs: number;
  #progress: (() => void) | null = null;

  /** `stallMs`: give up after this long without an answer (default {@linkcode STALL_MS}). */
  constructor(options: { log?: (line: string) => void; stallMs?: number } = {}) {
    this.#log = options.log;
    this.#stallMs = options.stallMs ?? STALL_MS;
  }

  /** A request arrived. */
  received(id: Id): void {
    this.#open.set(id, (this.#open.get(id) ?? 0) + 1);
  }

  /** An answer to `id` was written. */
  answered(id: Id | null | undefined): void {
    if (id === null || id === undefined) return;
    const count = this.#open.get(id);
    if (count === undefined) return;
    if (count > 1) this.#open.set(id, count - 1);
    else this.#open.delete(id);
    this.#progress?.();
  }

  /** Resolves once every request received is answered, or no answer came for the stall time. */
  async settled(): Promise<void> {
    while (this.#open.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const progressed = await new Promise<boolean>((resolve) => {
        this.#progress = () => resolve(true);
        timer = setTimeout(() => resolve(false), this.#stallMs);
      }).finally(() => {
        clearTimeout(timer);
        this.#progress = null;
      });
      if (!progressed) {
        const ids = [...this.#open.keys()].slice(0, 10).map((id) => JSON.stringify(id));
        this.#log?.(
          `input closed; ${this.#open.size} request(s) still unanswered after ${this.#stallMs} ms ` +
            `without progress (${ids.join(", ")}); closing`,
        );
        return;
      }
    }
  }
}
