/**
 * `waymark serve --http 0` as a child process: started, its port read from what it announces on
 * stderr, and stopped with SIGTERM, saying how it ended and what it wrote on stdout.
 * @module
 */
import { dbArgs, MAIN } from "./server.ts";

/** A running HTTP server. */
export interface HttpServer {
  /** The port it listens on (127.0.0.1). */
  port: number;
  /** Its process id. */
  pid: number;
  /** What it has written on stderr so far. */
  stderr(): string;
  /** Sends SIGTERM and waits for the process: whether it exited cleanly, and its stdout. */
  stop(): Promise<{ success: boolean; stdout: string }>;
  /** Sends SIGKILL (no chance to finish anything) and waits for the process to be gone. */
  kill(): Promise<void>;
}

/**
 * Starts `serve --http PORT` (default 0: any free port) on `home` (in `cwd`, with `args` added;
 * on the home's PostgreSQL database under `WAYMARK_TEST_DB=postgres`) and reads its port.
 */
export async function startHttpServer(
  home: string,
  options: {
    cwd?: string;
    args?: readonly string[];
    port?: number;
    /** More `deno run` flags (e.g. `--cpu-prof`). */
    denoArgs?: readonly string[];
    /** More environment variables. */
    env?: Record<string, string>;
  } = {},
): Promise<HttpServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      ...options.denoArgs ?? [],
      MAIN,
      "serve",
      "--http",
      String(options.port ?? 0),
      "--home",
      home,
      // the home's database, as every server and command on it is given (unless `args` names one)
      ...(options.args?.includes("--db") ? [] : dbArgs(home)),
      ...options.args ?? [],
    ],
    cwd: options.cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let port = 0;
  while (!port) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${seen}`);
    seen += value;
    port = Number(seen.match(/https?:\/\/127\.0\.0\.1:(\d+)\/mcp/)?.[1] ?? 0);
  }
  // keep draining stderr so the child never blocks on a full pipe
  const drain = (async () => {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      seen += read.value;
    }
  })();
  const stdout = child.stdout.text();
  return {
    port,
    pid: child.pid,
    stderr: () => seen,
    async stop() {
      child.kill("SIGTERM");
      const status = await child.status;
      await drain.catch(() => {});
      return { success: status.success, stdout: await stdout };
    },
    async kill() {
      child.kill("SIGKILL");
      await child.status;
      await drain.catch(() => {});
      await stdout.catch(() => {});
    },
  };
}
