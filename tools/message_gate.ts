/**
 * Holding a connection's messages until its handlers exist. A stdio server answers the
 * handshake and `tools/list` from what it knows at start-up while the engine and the store
 * load; every other request and notification waits here, in order, and reaches the SDK exactly
 * as it arrived once the gate opens, so the server then behaves as if it had been ready all
 * along. Responses to the server's own requests always pass. What is held is bounded by the one
 * load that opens the gate (a failure to open ends the process).
 * @module
 */
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  Transport,
} from "npm:@modelcontextprotocol/server@2.4.0";

/** Methods answered before the gate opens. */
export type EarlyMethods = ReadonlySet<string>;

/** Holds a transport's messages (all but `early` ones and responses) until {@linkcode open}. */
export class MessageGate {
  readonly #early: EarlyMethods;
  readonly #onHeld: () => void;
  #held: [JSONRPCMessage, MessageExtraInfo | undefined][] | null = [];
  #deliver: Transport["onmessage"];

  /** `onHeld` runs on each request held (to start loading what opens the gate). */
  constructor(early: EarlyMethods, onHeld: () => void) {
    this.#early = early;
    this.#onHeld = onHeld;
  }

  /** Sits between `transport` and the handler the SDK installed on it. */
  guard(transport: Transport): void {
    this.#deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const method = (message as { method?: unknown }).method;
      if (this.#held === null || typeof method !== "string" || this.#early.has(method)) {
        this.#deliver?.(message, extra);
        return;
      }
      // a held request needs the handlers; a notification (`initialized` first) can wait
      if ("id" in message) queueMicrotask(this.#onHeld);
      this.#held.push([message, extra]);
    };
  }

  /** Delivers what was held, in order; from now on every message passes. */
  open(): void {
    const held = this.#held ?? [];
    this.#held = null;
    for (const [message, extra] of held) this.#deliver?.(message, extra);
  }
}
