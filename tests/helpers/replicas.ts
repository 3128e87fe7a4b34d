/**
 * The team service as replicas: N `serve --http --stateless` processes on one PostgreSQL
 * database, sharing one home (so one keyring: tokens one replica mints verify on every other),
 * authenticated with personal access tokens, behind the round-robin proxy
 * (`round_robin_proxy.ts`). A replica can be killed (SIGKILL) and started again on its port.
 * Agents reach it with a real MCP client (`replicaClient`) that retries a call that failed in
 * transit, as a client behind a balancer must.
 * @module
 */
import { Client, StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/client@2.4.0";
import { personalToken } from "./auth_service.ts";
import { type HttpServer, startHttpServer } from "./http_server.ts";
import type { PostgresServer } from "./postgres.ts";
import { type RoundRobinProxy, startRoundRobinProxy } from "./round_robin_proxy.ts";
import { type CallResult, tempHome } from "./server.ts";
import { writeProjectWorkflow } from "./workflows.ts";

/** The resource URI the replicas are configured with. */
export const REPLICA_RESOURCE = "https://waymark.test/mcp";
/** The scope their tokens carry. */
export const REPLICA_SCOPE = "waymark";

/** A running set of replicas behind a proxy. */
export interface ReplicaSet {
  /** The database they share. */
  dbUrl: string;
  /** The proxy's MCP URL. */
  url: URL;
  /** The proxy (its per-upstream request counts). */
  proxy: RoundRobinProxy;
  /** How many replicas there are. */
  count: number;
  /** Replica `i`'s own MCP URL (not through the proxy). */
  replicaUrl(i: number): URL;
  /** Creates a personal access token (`tokens create`) and returns it. */
  pat(name: string, extra?: string[]): Promise<string>;
  /** Kills replica `i` with SIGKILL. */
  kill(i: number): Promise<void>;
  /** Starts replica `i` again on its port. */
  restart(i: number): Promise<void>;
  /** Stops replica `i` with SIGTERM (a graceful shutdown): whether it exited cleanly, and when. */
  terminate(i: number): Promise<{ success: boolean; ms: number }>;
  /** Stops every replica and the proxy, and removes the home. */
  stop(): Promise<void>;
}

/**
 * Starts `count` replicas on a fresh database of `pg`, with a project workflow of plain steps
 * (`workflow`) in their workspace; `args` are more `serve` flags.
 */
export async function startReplicas(
  pg: PostgresServer,
  options: { count: number; workflow: { id: string; steps: number }; args?: string[] },
): Promise<ReplicaSet> {
  const home = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "waymark-replicas-ws-" });
  await writeProjectWorkflow(workspace, options.workflow);
  const dbUrl = await pg.createDatabase();
  const args = [
    "--stateless",
    "--db",
    dbUrl,
    "--auth-resource",
    REPLICA_RESOURCE,
    "--auth-scope",
    REPLICA_SCOPE,
    "--personal-tokens",
    ...options.args ?? [],
  ];
  const start = (port?: number) => startHttpServer(home.home, { cwd: workspace, args, port });
  // the first one migrates the database; the others find it migrated
  const replicas: HttpServer[] = [await start()];
  replicas.push(...await Promise.all(Array.from({ length: options.count - 1 }, () => start())));
  const ports = replicas.map((r) => r.port);
  const proxy = startRoundRobinProxy(ports);
  const alive = new Set(replicas.keys());
  return {
    dbUrl,
    url: new URL(`http://127.0.0.1:${proxy.port}/mcp`),
    proxy,
    count: options.count,
    replicaUrl: (i) => new URL(`http://127.0.0.1:${ports[i]}/mcp`),
    pat: (name, extra = []) =>
      personalToken(home.home, { name, scope: REPLICA_SCOPE, extra: ["--db", dbUrl, ...extra] }),
    async kill(i) {
      alive.delete(i);
      await replicas[i]!.kill();
    },
    async terminate(i) {
      alive.delete(i);
      const t0 = performance.now();
      const { success } = await replicas[i]!.stop();
      return { success, ms: performance.now() - t0 };
    },
    async restart(i) {
      replicas[i] = await start(ports[i]);
      alive.add(i);
    },
    async stop() {
      await proxy.close();
      await Promise.all([...alive].map((i) => replicas[i]!.stop()));
      await Deno.remove(workspace, { recursive: true });
      await home.cleanup();
    },
  };
}

/** A real MCP client (v2 SDK) of the replicas that retries calls that failed in transit. */
export interface ReplicaClient {
  /**
   * Calls a tool until an answer arrives: a request the proxy or a dying replica dropped, or
   * an answer that says to retry, is sent again, unchanged, on a fresh connection.
   */
  call(name: string, args: Record<string, unknown>): Promise<CallResult>;
  /** Calls that were sent again. */
  readonly retries: number;
  /** Why calls were sent again: the error code or message, by count. */
  readonly reasons: ReadonlyMap<string, number>;
  /** Closes it. */
  close(): Promise<void>;
}

/** How long one try of a call may take before it is sent again, by default. */
const TRY_TIMEOUT_MS = 15_000;

/**
 * Connects a client to `url` sending `token`; a try that takes longer than `tryTimeoutMs` is
 * given up and sent again.
 */
export function replicaClient(
  url: URL,
  token: string,
  options: { tryTimeoutMs?: number } = {},
): ReplicaClient {
  let client: Client | null = null;
  let retries = 0;
  const reasons = new Map<string, number>();
  const note = (why: string) => reasons.set(why, (reasons.get(why) ?? 0) + 1);
  const connect = async () => {
    const fresh = new Client({ name: "waymark-replica-agent", version: "1.0.0" });
    await fresh.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return fresh;
  };
  return {
    async call(name, args) {
      for (let attempt = 0;; attempt++) {
        try {
          client ??= await connect();
          const result = await client.callTool({ name, arguments: args }, {
            timeout: options.tryTimeoutMs ?? TRY_TIMEOUT_MS,
          }) as CallResult;
          const retry = (result.structuredContent as { error?: { retry?: { kind: string } } })
            ?.error?.retry?.kind;
          if (!result.isError || retry === "not_retryable" || retry === undefined) return result;
          note(String((result.structuredContent as { error: { code: string } }).error.code));
        } catch (error) {
          note(String(error).slice(0, 80));
          if (attempt >= 20) throw error;
          void client?.close().catch(() => {});
          client = null;
        }
        if (attempt >= 20) throw new Error(`${name} kept failing`);
        retries++;
        await new Promise((r) => setTimeout(r, 100 + 50 * attempt));
      }
    },
    get retries() {
      return retries;
    },
    reasons,
    close: async () => {
      await client?.close().catch(() => {});
    },
  };
}
