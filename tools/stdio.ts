/**
 * Serving MCP over stdio: stdout carries JSON-RPC only. A line that is not JSON, or not a
 * JSON-RPC 2.0 message, is answered here with the error JSON-RPC prescribes (-32700 parse
 * error, -32600 invalid request, or too large) instead of being dropped; every other line goes on
 * to the SDK.
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

/** The JSON-RPC error answering a line that is not a valid message, or `null` when it is one. */
function rejectLine(line: string): Record<string, unknown> | null {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch (error) {
    return errorResponse(
      null,
      -32700,
      `Parse error: ${(error as Error).message}. Send one JSON-RPC message per line.`,
    );
  }
  if (
    isJSONRPCRequest(message) || isJSONRPCNotification(message) ||
    isJSONRPCResultResponse(message) ||
    isJSONRPCErrorResponse(message)
  ) {
    return null;
  }
  const id = (message as { id?: unknown } | null)?.id;
  return errorResponse(
    typeof id === "string" || typeof id === "number" ? id : null,
    -32600,
    Array.isArray(message)
      ? "Invalid Request: batches are not supported; send one message per line."
      : 'Invalid Request: expected a JSON-RPC 2.0 request, notification or response (`jsonrpc: "2.0"`, a string `method`).',
  );
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

/** Splits `input` into lines, answers invalid and oversize ones on `output`, passes the rest on. */
function screen(input: Readable, output: Writable, limit: number): Readable {
  const valid = new PassThrough();
  const answer = (message: Record<string, unknown>) => output.write(`${JSON.stringify(message)}\n`);
  const splitter = new LineSplitter(limit, {
    line(text) {
      if (text.trim() === "") return;
      const rejection = rejectLine(text);
      if (rejection) answer(rejection);
      else valid.write(`${text}\n`);
    },
    oversize: (line) => answer(oversizeError(line, limit)),
  });
  input.on("data", (chunk: Uint8Array) => splitter.push(chunk));
  input.on("end", () => {
    splitter.end();
    valid.end();
  });
  input.on("close", () => valid.end());
  input.on("error", (error) => valid.destroy(error));
  return valid;
}

/** Serves one MCP connection on this process's stdin/stdout until it closes. */
export function serveMcpStdio(
  factory: () => Server,
  options: { log?: (line: string) => void; onClose?: () => void; maxMessageBytes?: number } = {},
): { close(): Promise<void> } {
  const stdin = screen(process.stdin, process.stdout, options.maxMessageBytes ?? MAX_MESSAGE_BYTES);
  const handle = serveStdio(factory, {
    transport: new StdioServerTransport(stdin, process.stdout),
    onerror: (error) => options.log?.(`stdio: ${error.message}`),
  });
  stdin.on("end", () => options.onClose?.());
  return handle;
}
