/**
 * The SDK server every waymark connection runs on, with nothing of the engine in it, so a stdio
 * server can answer the handshake while the rest loads (`early_server.ts`): the capabilities in
 * one place, each tool call's arguments kept as they arrived, tasks advertised in the shape of
 * the revision a connection speaks (`revisions/`), cancellation limited to waits, and an optional
 * {@linkcode MessageGate}.
 * @module
 */
import {
  type JSONRPCRequest,
  type Result,
  Server,
  type ServerCapabilities,
  type ServerContext,
  type Transport,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { RawArguments } from "../calls/raw_arguments.ts";
import type { MessageGate } from "./message_gate.ts";
import { revisionOf } from "../revisions/mod.ts";

/**
 * Requests that `notifications/cancelled` ends: waits, which record nothing. Any other request
 * may already have written (a run started, a step acknowledged) when the cancellation arrives,
 * and the SDK drops the answer of a cancelled request, so the client would never learn what was
 * recorded (a started run's tokens among it): those run to the end and are answered, which the
 * MCP spec allows (the client ignores an answer it no longer wants).
 */
const CANCELLABLE: ReadonlySet<string> = new Set(["tasks/result"]);

/** Requests whose method is remembered for a cancellation, at most (the oldest goes first). */
const MAX_REMEMBERED = 1_024;

/** A tool call's answer that is a task (`CreateTaskResult`), not a tool result. */
function isTaskAnswer(result: Result): boolean {
  return result.resultType === "task" || (typeof result.task === "object" && result.task !== null);
}

/** Carries a task answer past the SDK's tool-result check, which knows only tool results. */
class TaskAnswer {
  constructor(readonly result: Result) {}
}

/**
 * The SDK server, keeping each tool call's arguments as they arrived (see `raw_arguments.ts`),
 * advertising tasks in the shape of the revision a connection speaks (`revisions/`), and
 * letting a tool call answer as a task.
 * With a gate, the messages it holds reach the handlers only when the gate opens.
 */
export class WaymarkServer extends Server {
  readonly rawArguments = new RawArguments();
  readonly #gate: MessageGate | undefined;

  constructor(
    info: { name?: string; version: string; instructions?: string },
    options: { gate?: MessageGate } = {},
  ) {
    super({ name: info.name ?? "waymark", version: info.version }, {
      capabilities: {
        tools: {},
        prompts: {},
        resources: { subscribe: true },
        logging: {},
        completions: {},
      },
      instructions: info.instructions,
    });
    this.#gate = options.gate;
  }

  override async connect(transport: Transport): Promise<void> {
    this.rawArguments.tap(transport);
    await super.connect(transport);
    // after the SDK's own handler is installed, so that what the gate holds is not dispatched
    this.#gate?.guard(transport);
    onlyWaitsCancel(transport);
  }

  override getCapabilities(): ServerCapabilities {
    return revisionOf(this).capabilities(super.getCapabilities());
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== "tools/call") return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (isTaskAnswer(result)) throw new TaskAnswer(result);
      return result;
    });
    return (request, ctx) =>
      checked(request, ctx).catch((error) => {
        if (error instanceof TaskAnswer) return error.result;
        throw error;
      });
  }
}

/**
 * Lets `notifications/cancelled` through only for {@linkcode CANCELLABLE} requests (outermost,
 * so a cancellation that arrives while the request is held at the gate is judged the same way).
 */
function onlyWaitsCancel(transport: Transport): void {
  const methods = new Map<string | number, string>();
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")) {
      methods.delete(m.id);
      methods.set(m.id, m.method);
      if (methods.size > MAX_REMEMBERED) methods.delete(methods.keys().next().value!);
    } else if (m.method === "notifications/cancelled") {
      const id = m.params?.requestId;
      const method = typeof id === "string" || typeof id === "number" ? methods.get(id) : undefined;
      if (method !== undefined && !CANCELLABLE.has(method)) return;
    }
    deliver?.call(transport, message, extra);
  };
}
