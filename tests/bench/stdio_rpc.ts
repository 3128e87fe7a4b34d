/**
 * A bare newline-delimited JSON-RPC client over a child process's stdio, for benchmarks: no
 * SDK on the hot path, one small line splitter, and the server's requests (`roots/list`,
 * `ping`) answered inline so a call's latency includes any round trip the server makes.
 * @module
 */

/** A JSON-RPC error object. */
export interface RpcErrorObject {
  /** Error code. */
  code: number;
  /** Message. */
  message: string;
  /** Extra data. */
  data?: unknown;
}

/** Thrown when a request gets a JSON-RPC error, times out, or the process goes away. */
export class RpcError extends Error {
  /** The JSON-RPC error, when the server sent one. */
  readonly rpc?: RpcErrorObject;
  constructor(message: string, rpc?: RpcErrorObject) {
    super(message);
    this.name = "RpcError";
    this.rpc = rpc;
  }
}

/** How to start the server. */
export interface SpawnOptions {
  /** Executable. */
  command: string;
  /** Arguments. */
  args: string[];
  /** Working directory. */
  cwd: string;
  /** Environment (merged over the current one). */
  env?: Record<string, string>;
  /** Roots to answer `roots/list` with (file URIs); `null` answers method-not-found. */
  roots?: { uri: string; name?: string }[] | null;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

const STDERR_TAIL_LINES = 40;

/** A JSON-RPC connection to a spawned server process. */
export class StdioRpc {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  readonly #pending = new Map<number, Pending>();
  readonly #roots: { uri: string; name?: string }[] | null;
  readonly #stderrTail: string[] = [];
  readonly #reading: Promise<void>;
  readonly #draining: Promise<void>;
  #nextId = 1;
  #gone: Error | null = null;
  /** Requests the server sent to us, by method. */
  readonly serverRequests: Record<string, number> = {};
  /** Notifications the server sent, by method. */
  readonly notifications: Record<string, number> = {};
  /** UTF-8 bytes of the last response's line (what a client reads and parses). */
  lastResponseBytes = 0;

  private constructor(child: Deno.ChildProcess, roots: { uri: string; name?: string }[] | null) {
    this.#child = child;
    this.#roots = roots;
    this.#writer = child.stdin.getWriter();
    this.#reading = this.#readLoop();
    this.#draining = this.#drainStderr();
  }

  /** Spawns the server with piped stdio. */
  static spawn(options: SpawnOptions): StdioRpc {
    const child = new Deno.Command(options.command, {
      args: options.args,
      cwd: options.cwd,
      env: options.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    return new StdioRpc(child, options.roots ?? null);
  }

  /** The process id. */
  get pid(): number {
    return this.#child.pid;
  }

  /** The last lines the server wrote to stderr. */
  stderrTail(): string {
    return this.#stderrTail.join("\n");
  }

  /** Sends a request and resolves with its `result`; rejects on an error response or timeout. */
  request(method: string, params?: unknown, timeoutMs = 120_000): Promise<unknown> {
    if (this.#gone) return Promise.reject(this.#gone);
    const id = this.#nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new RpcError(`${method} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }).catch(
        (error) => {
          clearTimeout(timer);
          this.#pending.delete(id);
          reject(error);
        },
      );
    });
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): Promise<void> {
    return this.#send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /**
   * Closes stdin (the server exits when its input ends), waits up to `graceMs`, then kills.
   * Never throws.
   */
  async close(graceMs = 5_000): Promise<void> {
    try {
      await this.#writer.close();
    } catch { /* already closed */ }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exited = await Promise.race([
      this.#child.status.then(() => true, () => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (!exited) {
      try {
        this.#child.kill("SIGKILL");
      } catch { /* already gone */ }
      await this.#child.status.catch(() => {});
    }
    await Promise.allSettled([this.#reading, this.#draining]);
  }

  async #send(message: unknown): Promise<void> {
    await this.#writer.write(this.#encoder.encode(`${JSON.stringify(message)}\n`));
  }

  async #readLoop(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of this.#child.stdout) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline = buffer.indexOf("\n");
        while (newline >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line.trim() !== "") this.#onLine(line);
          newline = buffer.indexOf("\n");
        }
      }
    } catch (error) {
      this.#fail(new RpcError(`reading server stdout failed: ${String(error)}`));
      return;
    }
    this.#fail(new RpcError("the server closed its stdout"));
  }

  async #drainStderr(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of this.#child.stderr) {
        buffer += decoder.decode(chunk, { stream: true });
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) {
          this.#stderrTail.push(line);
          if (this.#stderrTail.length > STDERR_TAIL_LINES) this.#stderrTail.shift();
        }
      }
    } catch { /* process gone */ }
    if (buffer) this.#stderrTail.push(buffer);
  }

  #fail(error: Error): void {
    this.#gone ??= error;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      this.#pending.delete(id);
      pending.reject(error);
    }
  }

  #onLine(line: string): void {
    let message: {
      id?: number | string;
      method?: string;
      result?: unknown;
      error?: RpcErrorObject;
    };
    try {
      message = JSON.parse(line);
    } catch {
      this.#fail(new RpcError(`the server wrote a non-JSON line to stdout: ${line.slice(0, 200)}`));
      return;
    }
    if (message.method !== undefined) {
      if (message.id === undefined) {
        this.notifications[message.method] = (this.notifications[message.method] ?? 0) + 1;
        return;
      }
      this.serverRequests[message.method] = (this.serverRequests[message.method] ?? 0) + 1;
      this.#answer(message.id, message.method);
      return;
    }
    const pending = typeof message.id === "number" ? this.#pending.get(message.id) : undefined;
    if (!pending) return;
    this.lastResponseBytes = this.#encoder.encode(line).length;
    this.#pending.delete(message.id as number);
    clearTimeout(pending.timer);
    if (message.error) {
      pending.reject(
        new RpcError(
          `JSON-RPC error ${message.error.code}: ${message.error.message}`,
          message.error,
        ),
      );
    } else {
      pending.resolve(message.result);
    }
  }

  #answer(id: number | string, method: string): void {
    let reply: unknown;
    if (method === "ping") reply = { jsonrpc: "2.0", id, result: {} };
    else if (method === "roots/list" && this.#roots) {
      reply = { jsonrpc: "2.0", id, result: { roots: this.#roots } };
    } else {reply = {
        jsonrpc: "2.0",
        id,
        error: { code: -32601, message: `Method not found: ${method}` },
      };}
    this.#send(reply).catch(() => {});
  }
}
