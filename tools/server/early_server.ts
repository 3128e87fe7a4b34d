/**
 * A stdio server that answers before the engine has loaded. What a client asks first (the
 * handshake, `tools/list`) depends on nothing but the profile's published face, which
 * `deno task schema` writes to `profiles/<name>_listing.json` (`profiles/registry.ts`); so
 * `waymark serve` answers it from that file while the engine, the store and the tools load, and holds every other message
 * (`message_gate.ts`) until they are composed onto the same server (`createMcpServer` with
 * `onto`). Loading starts once `tools/list` is answered, or at the first request held.
 * @module
 */
import type { ListToolsResult } from "npm:@modelcontextprotocol/server@2.4.0";
import {
  isListed,
  type ListingOptions,
  PROFILES,
  type PublishedProfile,
} from "../profiles/registry.ts";
import { type Revision, revisionOf } from "../revisions/mod.ts";
import { type GateFailure, MessageGate } from "./message_gate.ts";
import { WaymarkServer } from "./waymark_server.ts";

/** Requests answered before the engine loads (everything else waits at the gate). */
const EARLY_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "server/discover",
  "ping",
  "tools/list",
]);

/**
 * `tools/list` of a published profile: the flagged tools only when their option is on, each as
 * the request's revision lists it (as `tool_calls.ts` answers).
 */
export function listPublished(
  published: PublishedProfile,
  options: ListingOptions & { revision: Revision },
): ListToolsResult {
  const tools = published.tools
    .filter((t) => isListed(t, options))
    .map(({ flag: _flag, execution, ...tool }) => options.revision.listedTool(tool, execution));
  return { tools };
}

/** An early server, and how to let the held messages through once it is complete. */
export interface EarlyServer {
  /** The server to serve now and to compose the rest onto. */
  readonly server: WaymarkServer;
  /** Delivers the held messages, in order, to the handlers now composed onto the server. */
  open(): void;
  /** Whether a tool call is held (the client called before waymark had opened). */
  callHeld(): boolean;
  /**
   * Nothing will be composed (waymark could not open): answers the held requests, and every
   * later one but the handshake, with `reason`; resolves once the first answer is written.
   */
  fail(reason: GateFailure): Promise<void>;
}

/**
 * A server that answers the handshake and `tools/list` from `published` (a profile's face from
 * the registry; default the default profile's) and holds the rest; `onNeeded` (called more than once; make it idempotent) starts
 * loading what completes it.
 */
export function earlyServer(
  options: {
    version: string;
    enableStartSession?: boolean;
    onNeeded: () => void;
    published?: PublishedProfile;
  },
): EarlyServer {
  const published = options.published ?? PROFILES.default;
  const gate = new MessageGate(EARLY_METHODS, options.onNeeded);
  const server = new WaymarkServer(
    { name: published.serverName, version: options.version, instructions: published.instructions },
    { gate },
  );
  server.setRequestHandler("tools/list", (_request, ctx) => {
    // the client can show its tools now; load the rest while it decides what to call
    setTimeout(options.onNeeded, 0);
    return listPublished(published, {
      enableStartSession: options.enableStartSession,
      revision: revisionOf(server, ctx),
    });
  });
  return {
    server,
    open: () => gate.open(),
    callHeld: () => gate.holds("tools/call"),
    fail: (reason) => gate.fail(reason),
  };
}
