/**
 * A waymark server in the test's own process, reached over a linked pair of transports: the same
 * `openWaymark` and MCP server a `waymark serve` process opens (its command line read by
 * `main.ts`'s own parser), every message serialized to JSON and parsed again on the way, as on
 * the wire, but no process start. `connect` serves this way unless the test file calls
 * {@linkcode serveAsProcesses} (where the process is the point: stdio framing, crashes and kills,
 * races between processes), the call asks for `process: true` or an environment of its own. The CLI, `connectRich` and the raw-wire helpers always start real processes.
 * @module
 */
import type { Transport } from "npm:@modelcontextprotocol/client@2.4.0";

/** One end of a linked pair: what it sends reaches the other end's `onmessage`, as JSON text. */
class LinkedTransport implements Transport {
  peer: LinkedTransport | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #closed = false;

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: Parameters<Transport["send"]>[0]): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the transport is closed"));
    const text = JSON.stringify(message);
    const peer = this.peer!;
    // a later macrotask, as a pipe delivers: a reply never runs inside its request's send
    setTimeout(() => {
      if (!peer.#closed) peer.onmessage?.(JSON.parse(text));
    }, 0);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.peer?.close();
    this.onclose?.();
  }
}

/** Two transports linked to each other: `[client side, server side]`. */
export function linkedPair(): [Transport, Transport] {
  const a = new LinkedTransport();
  const b = new LinkedTransport();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

let inProcess = true;

/**
 * Makes `connect` in this test file's worker start a real `waymark serve` process for every
 * server (`deno task test` shares a worker only among files that all call it,
 * `scripts/test_groups.ts`). Call it at the top of a file whose tests are about processes.
 */
export function serveAsProcesses(): void {
  inProcess = false;
}

/** Whether `connect` in this test file serves in-process. */
export function servingInProcess(): boolean {
  return inProcess;
}

/**
 * Opens waymark as `waymark serve <args>` would in `cwd` and connects its MCP server to the
 * server side of a linked pair; `close` closes the server and the database.
 */
export async function serveOnPair(
  args: string[],
  cwd: string,
): Promise<{ transport: Transport; close(): Promise<void> }> {
  const { serveSettings } = await import("../../main.ts");
  const { openWaymark } = await import("../../mod.ts");
  const settings = serveSettings(["serve", ...args]);
  if (typeof settings === "number") throw new Error(`waymark serve ${args.join(" ")} refused`);
  const waymark = await openWaymark({
    ...settings.options,
    workspace: settings.options.workspace ?? cwd,
  });
  const server = waymark.mcpServer({ ...settings.server, log: () => {}, cwd });
  const [client, side] = linkedPair();
  await server.connect(side);
  return {
    transport: client,
    async close() {
      await server.close();
      await waymark.close();
    },
  };
}
