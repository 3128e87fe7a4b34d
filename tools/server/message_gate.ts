/**
 * Holding a connection's messages until its handlers exist. A stdio server answers the
 * handshake and `tools/list` from what it knows at start-up while the engine and the store
 * load; every other request and notification waits here, in order, and reaches the SDK exactly
 * as it arrived once the gate opens, so the server then behaves as if it had been ready all
 * along. Responses to the server's own requests always pass. What is held is bounded by the one
 * load that opens the gate. When that load fails, the gate fails instead: each request held, and
 * each one after (the handshake aside), is answered with the reason, so the client learns why
 * instead of seeing the connection close.
 * @module
 */
import type {
  JSONRPCMessage,
  JSONRPCRequest,
  MessageExtraInfo,
  Transport,
} from "npm:@modelcontextprotocol/server@2.4.0";

/** Methods answered before the gate opens. */
export type EarlyMethods = ReadonlySet<string>;

/** Why the gate failed: the JSON-RPC error every request is answered with. */
export interface GateFailure {
  /** JSON-RPC error code. */
  code: number;
  /** What went wrong and what to do. */
  message: string;
  /** Structured facts (a waymark error: code, message, retry, details). */
  data: Record<string, unknown>;
}

/** Requests still answered normally after the gate failed: the handshake. */
const HANDSHAKE: ReadonlySet<string> = new Set(["initialize", "server/discover", "ping"]);

/** Holds a transport's messages (all but `early` ones and responses) until {@linkcode open}. */
export class MessageGate {
  readonly #early: EarlyMethods;
  readonly #onHeld: () => void;
  #held: [JSONRPCMessage, MessageExtraInfo | undefined][] | null = [];
  #deliver: Transport["onmessage"];
  #transport: Transport | undefined;
  #failure: { reason: GateFailure; answered: () => void } | null = null;

  /** `onHeld` runs on each request held (to start loading what opens the gate). */
  constructor(early: EarlyMethods, onHeld: () => void) {
    this.#early = early;
    this.#onHeld = onHeld;
  }

  /** Sits between `transport` and the handler the SDK installed on it. */
  guard(transport: Transport): void {
    this.#transport = transport;
    this.#deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const method = (message as { method?: unknown }).method;
      if (this.#failure) return this.#refuse(message, extra);
      if (this.#held === null || typeof method !== "string" || this.#early.has(method)) {
        this.#deliver?.(message, extra);
        return;
      }
      // a held request needs the handlers; a notification (`initialized` first) can wait
      if ("id" in message) queueMicrotask(this.#onHeld);
      this.#held.push([message, extra]);
    };
  }

  /** Whether a request for `method` is held. */
  holds(method: string): boolean {
    return this.#held?.some(([message]) => (message as { method?: unknown }).method === method) ??
      false;
  }

  /** Delivers what was held, in order; from now on every message passes. */
  open(): void {
    const held = this.#held ?? [];
    this.#held = null;
    for (const [message, extra] of held) this.#deliver?.(message, extra);
  }

  /**
   * The gate will never open: answers each request held, and each later one but the handshake,
   * with `reason`. Resolves once the first of those answers is written (at once when some were
   * held, else at the next request).
   */
  fail(reason: GateFailure): Promise<void> {
    const held = this.#held ?? [];
    this.#held = null;
    return new Promise((answered) => {
      this.#failure = { reason, answered };
      for (const [message, extra] of held) this.#refuse(message, extra);
    });
  }

  #refuse(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    const method = (message as { method?: unknown }).method;
    if (typeof method !== "string" || HANDSHAKE.has(method)) {
      this.#deliver?.(message, extra);
      return;
    }
    if (!("id" in message)) return;
    const { reason, answered } = this.#failure!;
    const { code, message: text, data } = reason;
    const id = (message as JSONRPCRequest).id;
    const sent = this.#transport?.send({
      jsonrpc: "2.0",
      id,
      error: { code, message: text, data },
    });
    void Promise.resolve(sent).catch(() => {}).then(answered);
  }
}
