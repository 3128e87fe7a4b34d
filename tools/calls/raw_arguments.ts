/**
 * Tool arguments exactly as they arrived. The SDK validates a `tools/call` by copying its
 * `arguments` into a fresh object, and that copy loses an own `__proto__` key (assigning it sets
 * the prototype instead), so the argument rules would never see one. A transport hands each
 * message first to a handler installed before `connect`, as parsed from the wire; this keeps
 * each `tools/call`'s arguments by request id until its handler takes them.
 * @module
 */
import type { Transport } from "npm:@modelcontextprotocol/server@2.4.0";

/** Requests whose arguments are kept and not yet taken, at most (a bound, not a queue). */
const MAX_PENDING = 256;

/** The raw arguments of a connection's `tools/call` requests, by request id. */
export class RawArguments {
  readonly #byId = new Map<string | number, unknown>();

  /** Keeps the arguments of every `tools/call` that `transport` delivers from now on. */
  tap(transport: Transport): void {
    const before = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const m = message as { id?: unknown; method?: unknown; params?: { arguments?: unknown } };
      if (m.method === "tools/call" && (typeof m.id === "string" || typeof m.id === "number")) {
        if (this.#byId.size >= MAX_PENDING) this.#byId.delete(this.#byId.keys().next().value!);
        this.#byId.set(m.id, m.params?.arguments);
      }
      before?.(message, extra);
    };
  }

  /** The arguments request `id` arrived with (once), or `undefined` when none were kept. */
  take(id: string | number): unknown {
    const args = this.#byId.get(id);
    this.#byId.delete(id);
    return args;
  }
}
