/**
 * A waymark server process spoken to in raw JSON-RPC lines, without an SDK client: for messages
 * an SDK would refuse to send (malformed, oversize, keys such as `__proto__`).
 * @module
 */
import { ROOT, serverArgs, tempHome } from "./server.ts";

/** A JSON-RPC message, loosely typed for assertions. */
// deno-lint-ignore no-explicit-any
export type Message = Record<string, any>;

/** A server process spoken to line by line. */
export class RawServer {
  readonly lines: string[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly #stdoutDone: Promise<void>;
  readonly #stderr: Promise<string>;
  #waiters: (() => void)[] = [];

  /** `denoFlags` go to `deno run` (such as `--cached-only`); `env` adds to the environment. */
  constructor(
    home: string,
    extraArgs: string[] = [],
    options: { denoFlags?: string[]; env?: Record<string, string> } = {},
  ) {
    const [run, ...rest] = serverArgs(home, extraArgs);
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [run!, ...(options.denoFlags ?? []), ...rest],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1", ...options.env },
    }).spawn();
    this.#stdin = this.#child.stdin.getWriter();
    this.#stderr = new Response(this.#child.stderr).text();
    this.#stdoutDone = this.#readStdout();
  }

  async #readStdout(): Promise<void> {
    let buffer = "";
    for await (const chunk of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let index;
      while ((index = buffer.indexOf("\n")) >= 0) {
        this.lines.push(buffer.slice(0, index));
        buffer = buffer.slice(index + 1);
      }
      for (const wake of this.#waiters.splice(0)) wake();
    }
    if (buffer.length > 0) this.lines.push(buffer);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Sends one line (a string as is, anything else as JSON). */
  async send(message: string | Message): Promise<void> {
    const line = typeof message === "string" ? message : JSON.stringify(message);
    await this.#stdin.write(new TextEncoder().encode(`${line}\n`));
  }

  /** Writes raw text, adding no newline. */
  async write(text: string): Promise<void> {
    await this.#stdin.write(new TextEncoder().encode(text));
  }

  /** Waits for the answer to request `id`. */
  async answer(id: number | string, timeoutMs = 10_000): Promise<Message> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer to request ${id}; stdout: ${this.lines.join("\n")}`)),
        timeoutMs,
      );
    });
    try {
      for (;;) {
        const found = this.lines.map(tryParse).find((m) =>
          m !== undefined && m.id === id && !("method" in m)
        );
        if (found) return found;
        await Promise.race([new Promise<void>((wake) => this.#waiters.push(wake)), timeout]);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a request and waits for its answer (10 s, or `timeoutMs`). */
  async request(
    id: number | string,
    method: string,
    params?: Message,
    timeoutMs?: number,
  ): Promise<Message> {
    await this.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    return await this.answer(id, timeoutMs);
  }

  /** The handshake: `initialize` as request 1 (protocol 2025-06-18), then `initialized`. */
  async handshake(clientName: string, timeoutMs?: number): Promise<Message> {
    const init = await this.request(1, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: clientName, version: "1.0.0" },
    }, timeoutMs);
    await this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return init;
  }

  /** Closes stdin and waits for the process to exit; returns its exit code and stderr. */
  async close(): Promise<{ code: number; stderr: string }> {
    await this.#stdin.close().catch(() => {});
    const status = await this.#child.status;
    await this.#stdoutDone;
    return { code: status.code, stderr: await this.#stderr };
  }

  /** Kills the process (cleanup after a failure). */
  kill(): void {
    try {
      this.#child.kill("SIGKILL");
    } catch { /* already exited */ }
  }
}

/** A line parsed as JSON, or `undefined` when it is not JSON. */
export function tryParse(line: string): Message | undefined {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Where {@linkcode onRawServer} runs: the server and its fresh home. */
export interface RawServerAt {
  /** The server process. */
  server: RawServer;
  /** Its WAYMARK_HOME. */
  home: string;
  /** The libSQL file in it. */
  dbFile: string;
}

/**
 * Runs `fn` against a raw server on a fresh home: `prepare` sets the home up first and `args`
 * adds to `serve`'s arguments; the server is killed if `fn` throws, and the home removed after.
 */
export async function onRawServer(
  fn: (at: RawServerAt) => Promise<void>,
  options: {
    args?: (home: string) => string[] | undefined;
    prepare?: (home: string) => Promise<void>;
    /** A home not yet started (see `tempHome`). */
    blank?: boolean;
  } = {},
): Promise<void> {
  const { home, dbFile, cleanup } = await tempHome({ blank: options.blank });
  try {
    await options.prepare?.(home);
    const server = new RawServer(home, options.args?.(home));
    try {
      await fn({ server, home, dbFile });
    } catch (error) {
      server.kill();
      throw error;
    }
  } finally {
    await cleanup();
  }
}
