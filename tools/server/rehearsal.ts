/**
 * The start-up rehearsal. A process's first tool call pays for code run for the first time
 * (V8 compiles a function when it is first called, zod v4 an object's parser when it first
 * parses, Kysely a query when it first builds it): finding a workflow (the compiler's identity,
 * the bundled files' index and hashes), compiling and preparing the store's queries, the run
 * listing, and the SDK's parse of a `tools/call` and of its result. A stdio server runs that
 * code once here, after waymark has opened and its handlers are composed and before the
 * messages held meanwhile are let through, so that a client's first call, which in practice
 * comes once its model has read the tools, finds it compiled.
 *
 * It writes no session data: it finds one bundled workflow (a lookup writes the workflow cache
 * when it learnt something, as every lookup does; that cache is not session data), compiles
 * and prepares queries without running them, reads the listing of a run that does not exist,
 * and makes one `tools/call`, on a connection of its own, that every tool refuses before
 * anything runs. It never fails or holds up start-up: an error ends it with one line on stderr;
 * a tool call the client already sent ends it (that call would only wait for it); and after
 * {@linkcode REHEARSAL_BUDGET_MS} the held messages go through whatever is left.
 * @module
 */
import {
  InMemoryTransport,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { setImmediate } from "node:timers";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { ToolProfile } from "../calls/define_tool.ts";
import { createMcpServer } from "./server.ts";

/** The longest the rehearsal holds a client's messages back. */
export const REHEARSAL_BUDGET_MS = 250;

/**
 * The bundled workflow the rehearsal finds: a small one that calls no routine (finding one
 * that does lists the folders), and not `waymark.code_review`, which the first-call bench starts
 * (finding it here would answer that call from the process's memo, not just warm its code).
 */
export const REHEARSED_WORKFLOW = "waymark.docs_update";

/** A run id (hex) that no run has: its listing's read finds nothing. */
const NO_RUN = "0".repeat(32);

/** What the rehearsal runs: the parts a connection is composed of. */
export interface RehearsalParts {
  /** The engine's dependencies (the real workflow source and store). */
  deps: EngineDeps;
  /** Compiles and prepares the store's queries (`SqlStore.prepareQueries`). */
  prepareQueries(): Promise<void>;
  /** The served profile. */
  profile: ToolProfile;
}

/** Options of {@linkcode rehearse}. */
export interface RehearsalOptions {
  /** The server version, for the rehearsal's own connection. */
  version: string;
  /** The protocol version the client negotiated, whose parse is rehearsed. */
  protocolVersion?: string;
  /** Asked before each part: `true` ends the rehearsal (a client's call is waiting). */
  interrupted?: () => boolean;
  /** Where the one line about a failure goes (never stdout). */
  log?: (line: string) => void;
  /** How long to wait for it at most; default {@linkcode REHEARSAL_BUDGET_MS}. */
  budgetMs?: number;
}

type Part = (parts: RehearsalParts, options: RehearsalOptions) => Promise<unknown>;

/** The parts, the most paid back per millisecond first. */
const PARTS: readonly Part[] = [
  // a source without `find` would load every workflow: not a rehearsal's cost
  ({ deps }) => deps.workflows.find?.(REHEARSED_WORKFLOW) ?? Promise.resolve(),
  refusedCall,
  (parts) => parts.prepareQueries(),
  ({ deps }) => deps.store.getRunListing(NO_RUN),
];

/**
 * Runs the rehearsal; resolves when it is over or its budget has passed, whichever is first.
 * Never rejects.
 */
export function rehearse(parts: RehearsalParts, options: RehearsalOptions): Promise<void> {
  const run = rehearsal(parts, options).catch((error) => {
    options.log?.(
      `start-up rehearsal ended early: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const budget = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, options.budgetMs ?? REHEARSAL_BUDGET_MS);
  });
  return Promise.race([run, budget]).finally(() => clearTimeout(timer));
}

async function rehearsal(parts: RehearsalParts, options: RehearsalOptions): Promise<void> {
  for (const part of PARTS) {
    if (options.interrupted?.()) return;
    await part(parts, options);
    // a turn of the event loop (without a timer's delay), so that a message the client sent
    // meanwhile is read before the next part
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * One `tools/call` on a connection composed as the client's is (`createMcpServer`), over an
 * in-memory pair: the handshake at the client's protocol version, then a call whose argument
 * holds U+0000, which every tool refuses before its schema is tried; the SDK parses the
 * request and the error result as it will the client's.
 */
async function refusedCall(parts: RehearsalParts, options: RehearsalOptions): Promise<void> {
  const tool = parts.profile.tools[0];
  if (!tool) return;
  const server = createMcpServer(parts.deps, { version: options.version, profile: parts.profile });
  const [client, served] = InMemoryTransport.createLinkedPair();
  const answers = new Map<number, (message: JSONRPCMessage) => void>();
  client.onmessage = (message) => {
    const id = (message as { id?: unknown }).id;
    if (typeof id === "number") answers.get(id)?.(message);
  };
  const request = (id: number, method: string, params: Record<string, unknown>) =>
    new Promise<JSONRPCMessage>((answered) => {
      answers.set(id, answered);
      void client.send({ jsonrpc: "2.0", id, method, params });
    });
  try {
    await server.connect(served);
    await request(1, "initialize", {
      protocolVersion: options.protocolVersion ?? LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "waymark-rehearsal", version: options.version },
    });
    await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const answer = await request(2, "tools/call", {
      name: tool.name,
      arguments: { rehearsal: "\u0000" },
    });
    if (!("result" in answer)) throw new Error(`its tool call failed: ${JSON.stringify(answer)}`);
  } finally {
    await server.close();
  }
}
