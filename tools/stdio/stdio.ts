/**
 * Serving MCP over stdio: stdout carries JSON-RPC only. A line that is not JSON, or not a
 * JSON-RPC 2.0 message, is answered here with the error JSON-RPC prescribes (-32700 parse
 * error, -32600 invalid request, or too large) instead of being dropped; every other line goes on
 * to the SDK. The end of stdin reaches the SDK (which then closes the connection and drops what
 * is unanswered) only once every request received has been answered (`unanswered.ts`), so a
 * client that writes its requests and closes its end still gets every answer.
 * @module
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type Server,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { serveStdio, StdioServerTransport } from "npm:@modelcontextprotocol/server@2.4.0/stdio";
import { PassThrough, type Readable, type Writable } from "node:stream";
import process from "node:process";
import { LineSplitter, MAX_MESSAGE_BYTES, type OversizeLine } from "./line_splitter.ts";
import { Unanswered } from "./unanswered.ts";

/** A line read: the message, or the JSON-RPC error answering a line that is not a valid one. */
function readLine(
  line: string,
): { message: unknown; rejection?: never } | { rejection: Record<string, unknown> } {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch (error) {
    return {
      rejection: errorResponse(
        null,
        -32700,
        `Parse error: ${(error as Error).message}. Send one JSON-RPC message per line.`,
      ),
    };
  }
  if (
    isJSONRPCRequest(message) || isJSONRPCNotification(message) ||
    isJSONRPCResultResponse(message) ||
    isJSONRPCErrorResponse(message)
  ) {
    return { message };
  }
  const id = (message as { id?: unknown } | null)?.id;
  return {
    rejection: errorResponse(
      typeof id === "string" || typeof id === "number" ? id : null,
      -32600,
      Array.isArray(message)
        ? "Invalid Request: batches are not supported; send one message per line."
        : 'Invalid Request: expected a JSON-RPC 2.0 request, notification or response (`jsonrpc: "2.0"`, a string `method`).',
    ),
  };
}

function errorResponse(
  id: string | number | null,
  code: number,
  message: string,
): Record<string, unknown> {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** The JSON-RPC error for a message over the size cap. */
export function oversizeError(line: OversizeLine, limit: number): Record<string, unknown> {
  return errorResponse(
    line.id,
    -32600,
    `Invalid Request: message too large (${line.bytes} bytes; the limit is ${limit} bytes). ` +
      "It was discarded; send smaller notes, artifacts or context, or split the work into checkpoints.",
  );
}

/**
 * Splits `input` into lines, answers invalid and oversize ones on `output`, passes the rest on,
 * noting each request in `unanswered`; its end is passed on once every request is answered.
 */
function screen(
  input: Readable,
  at: { output: Writable; limit: number; unanswered: Unanswered },
): Readable {
  const { output, limit, unanswered } = at;
  const valid = new PassThrough();
  const answer = (message: Record<string, unknown>) => output.write(`${JSON.stringify(message)}\n`);
  const splitter = new LineSplitter(limit, {
    line(text) {
      if (text.trim() === "") return;
      const read = readLine(text);
      if (read.rejection) return void answer(read.rejection);
      if (isJSONRPCRequest(read.message)) unanswered.received(read.message.id);
      valid.write(`${text}\n`);
    },
    oversize: (line) => answer(oversizeError(line, limit)),
  });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    splitter.end();
    void unanswered.settled().then(() => valid.end());
  };
  input.on("data", (chunk: Uint8Array) => splitter.push(chunk));
  input.on("end", end);
  input.on("close", end);
  input.on("error", (error) => valid.destroy(error));
  return valid;
}

/** The SDK's stdio transport, telling `unanswered` of every answer it writes. */
class AnsweringTransport extends StdioServerTransport {
  readonly #unanswered: Unanswered;

  constructor(stdin: Readable, stdout: Writable, unanswered: Unanswered) {
    super(stdin, stdout);
    this.#unanswered = unanswered;
  }

  override send(message: Parameters<StdioServerTransport["send"]>[0]): Promise<void> {
    const sent = super.send(message);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const settle = () => this.#unanswered.answered(message.id);
      sent.then(settle, settle);
    }
    return sent;
  }
}

/** Serves one MCP connection on this process's stdin/stdout until it closes. */
export function serveMcpStdio(
  factory: () => Server,
  options: { log?: (line: string) => void; onClose?: () => void; maxMessageBytes?: number } = {},
): { close(): Promise<void> } {
  const unanswered = new Unanswered({ log: options.log });
  const stdin = screen(process.stdin, {
    output: process.stdout,
    limit: options.maxMessageBytes ?? MAX_MESSAGE_BYTES,
    unanswered,
  });
  const handle = serveStdio(factory, {
    transport: new AnsweringTransport(stdin, process.stdout, unanswered),
    onerror: (error) => options.log?.(`stdio: ${error.message}`),
  });
  stdin.on("end", () => options.onClose?.());
  return handle;
}
