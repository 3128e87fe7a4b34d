/**
 * Talking to a spawned MCP server in the benchmarks: how each thing under test is started (the
 * SDK echo floor, `deno task start`, `deno run main.ts serve`, the single-file build), the
 * handshake, timed tool calls, and the server's resident memory.
 * @module
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { StdioRpc } from "./stdio_rpc.ts";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The MCP protocol version the bench speaks. */
export const PROTOCOL_VERSION = "2025-06-18";

/** A tool call's result, as far as the bench reads it. */
export interface ToolResult {
  /** Text content. */
  content?: { type: string; text: string }[];
  /** Structured content. */
  structuredContent?: Record<string, unknown>;
  /** Set on a failure. */
  isError?: boolean;
}

/** A step response, as far as the bench reads it. */
export interface Step {
  /** Token for the next call. */
  stateToken: string;
  /** Token that acknowledges the pending step. */
  ackToken?: string;
  /** The pending step. */
  pending: { stepId: string } | null;
  /** Whether the run is complete. */
  isComplete: boolean;
}

/** Something went wrong in what was measured (not in the bench itself). */
export class BenchFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BenchFailure";
  }
}

/** What is spawned: the floor or one way of running waymark. */
export type Subject = "echo" | "task_start" | "main_ts" | "bundle";

/** How to spawn a subject. */
export interface SpawnSpec {
  /** Which subject. */
  subject: Subject;
  /** `WAYMARK_HOME` (ignored by the floor). */
  home: string;
  /** Working directory (the client's workspace). */
  cwd: string;
  /** Whether the client advertises roots (the workspace folder). */
  roots: boolean;
  /** The single-file build, for `bundle`. */
  bundleFile?: string;
  /** Extra `deno run` flags (such as `--cpu-prof`), for `main_ts`. */
  denoFlags?: string[];
}

function argsFor(spec: SpawnSpec): string[] {
  const home = ["--home", spec.home];
  switch (spec.subject) {
    case "echo":
      return ["run", "-A", "--quiet", join(ROOT, "tests", "bench", "echo_server.ts")];
    case "task_start": // exactly the README's `deno task start`, from any folder
      return ["task", "--quiet", "--config", join(ROOT, "deno.json"), "start", ...home];
    case "main_ts":
      return [
        "run",
        "-A",
        "--quiet",
        ...spec.denoFlags ?? [],
        join(ROOT, "main.ts"),
        "serve",
        ...home,
      ];
    case "bundle":
      return ["run", "-A", "--quiet", spec.bundleFile!, "serve", ...home];
  }
}

/** Spawns a subject as an MCP client would: a child process over stdio. */
export function spawnSubject(spec: SpawnSpec): StdioRpc {
  return StdioRpc.spawn({
    command: Deno.execPath(),
    args: argsFor(spec),
    cwd: spec.cwd,
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    roots: spec.roots ? [{ uri: new URL(`file://${spec.cwd}/`).href, name: "workspace" }] : null,
  });
}

/** `initialize` and `notifications/initialized`. */
export async function handshake(rpc: StdioRpc, roots: boolean): Promise<void> {
  await rpc.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: roots ? { roots: { listChanged: true } } : {},
    clientInfo: { name: "waymark-bench", version: "1.0.0" },
  });
  await rpc.notify("notifications/initialized");
}

/** Calls a tool; an error result is a {@linkcode BenchFailure}. */
export async function callTool(
  rpc: StdioRpc,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const result = await rpc.request("tools/call", { name, arguments: args }) as ToolResult;
  if (result.isError) {
    const error = (result.structuredContent as { error?: { code?: string } } | undefined)?.error;
    throw new BenchFailure(
      `${name} returned an error${error?.code ? ` (${error.code})` : ""}: ${
        result.content?.[0]?.text?.slice(0, 500)
      }`,
    );
  }
  if (!result.structuredContent) throw new BenchFailure(`${name} returned no structuredContent`);
  return result;
}

/** The step in a tool result. */
export function step(result: ToolResult, what: string): Step {
  const s = result.structuredContent as unknown as Step;
  if (typeof s.stateToken !== "string") {
    throw new BenchFailure(`${what}: no stateToken in the response`);
  }
  return s;
}

/** Times one call: performance.now() around the request, response parsed. */
export async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, value];
}

/** Arguments that acknowledge the pending step of `at`. */
export function advanceArgs(at: Step): Record<string, unknown> {
  if (!at.ackToken || !at.pending) {
    throw new BenchFailure("the long run has no pending step to acknowledge");
  }
  return {
    stateToken: at.stateToken,
    ackToken: at.ackToken,
    output: { notesMarkdown: `Done ${at.pending.stepId}.` },
  };
}

/** Adds the server's last stderr lines to an error. */
export function withStderr(error: unknown, rpc: StdioRpc): Error {
  const tail = rpc.stderrTail();
  const base = error instanceof Error ? error : new Error(String(error));
  if (tail.trim() && !base.message.includes("--- server stderr")) {
    base.message += `\n--- server stderr (last lines) ---\n${tail}`;
  }
  return base;
}

/** A process's resident set size in KiB (Linux `/proc`), or null where that cannot be read. */
export function rssKib(pid: number): number | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}
