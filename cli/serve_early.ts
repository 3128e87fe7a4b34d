/**
 * `waymark serve` over stdio, loaded only by that command (`../lazy.ts`): the early server, the
 * MCP SDK and the stdio transport are no cost to the other commands and to `waymark hook`, which a
 * host waits on.
 * @module
 */
import type { WaymarkOptions, WaymarkServerOptions } from "../mod.ts";
import { VERSION } from "../version.ts";
import { earlyServer } from "../tools/server/early_server.ts";
import { PROFILES } from "../tools/profiles/registry.ts";
import { serveMcpStdio } from "../tools/stdio/stdio.ts";
import { load } from "../lazy.ts";
import type { OpenedServe } from "./mod.ts";
import type { GateFailure as OpenedFailure } from "../tools/server/message_gate.ts";

/** The commands (`cli/`), loaded on first use. */
const loadCli = () => load<typeof import("./mod.ts")>("cli");

/**
 * `waymark serve` over stdio: each connection's early server (the SDK
 * may make more than one while it settles the protocol revision) answers the handshake and
 * `tools/list` at once; the commands load and open waymark once, when a server first needs it
 * (after `tools/list`, or at the first other request), compose the rest onto it and rehearse a
 * first call (`tools/server/rehearsal.ts`) before letting the held messages through. When waymark
 * cannot be opened, the early servers answer the requests they hold (or the next one) with why,
 * and the process exits 1 once the first such answer is written.
 */
export async function serveEarly(
  options: WaymarkOptions,
  server: WaymarkServerOptions,
): Promise<number> {
  const profile = server.profile ?? "default";
  const log = server.log ?? (() => {});
  let opened: Promise<OpenedServe> | undefined;
  const open = () =>
    opened ??= loadCli().then((cli) => cli.openServe({ options, server })).catch((error) => ({
      ok: false as const,
      failure: unexpectedFailure(error),
    }));
  let failed: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => failed = resolve);
  let reported = false;
  const connection = () => {
    let composing: Promise<void> | undefined;
    const early = earlyServer({
      version: VERSION,
      published: PROFILES[profile],
      enableStartSession: server.enableStartSession,
      onNeeded: () => {
        composing ??= open().then(async (served) => {
          if (served.ok) {
            served.compose(early.server);
            // before the held messages: a first call then finds its code compiled (a call
            // already held ends it: that call would only wait for it)
            await served.rehearse(early.server, () => early.callHeld());
            return early.open();
          }
          if (!reported) log(`fatal: ${served.failure.data.message}`);
          reported = true;
          void early.fail(served.failure).then(() => failed(1));
        });
      },
    });
    return early.server;
  };
  log(`serving MCP over stdio (${profile} profile)`);
  const closed = new Promise<number>((resolve) => {
    serveMcpStdio(connection, { log, onClose: () => resolve(0) });
  });
  const code = await Promise.race([closed, exited]);
  const served = await opened;
  if (served?.ok) await served.close();
  return served && !served.ok ? 1 : code;
}

/** The answer when the commands themselves could not load (a broken install). */
function unexpectedFailure(error: unknown): OpenedFailure {
  const message = `waymark could not start: ${
    error instanceof Error ? error.message : String(error)
  }. Reinstall waymark, then start the server again.`;
  return {
    code: -32000,
    message,
    data: { code: "STARTUP_FAILED", message, retry: { kind: "not_retryable" } },
  };
}
