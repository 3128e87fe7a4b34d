/**
 * Test helpers for runs as tasks: a home holding the task test workflows, and a client that
 * speaks the 2026-07-28 revision in raw JSON-RPC over stdio (no SDK client speaks the tasks
 * extension yet): every request carries the per-request `_meta` envelope.
 * @module
 */
import { fileURLToPath as fromFileUrl } from "node:url";
import { type Message, RawServer } from "./raw_server.ts";
import { tempHome } from "./server.ts";

/** The tasks extension's id. */
export const TASKS_EXT = "io.modelcontextprotocol/tasks";

/** A home whose user workflows are `user.deploy` and `user.secrets` (tests/fixtures/tasks). */
export async function taskHome(): Promise<Awaited<ReturnType<typeof tempHome>>> {
  const home = await tempHome();
  await Deno.mkdir(`${home.home}/workflows`, { recursive: true });
  for (const name of ["deploy.json", "secrets.json"]) {
    const from = fromFileUrl(new URL(`../fixtures/tasks/${name}`, import.meta.url));
    await Deno.copyFile(from, `${home.home}/workflows/${name}`);
  }
  return home;
}

/** Client capabilities declaring the tasks extension (and forms, unless told otherwise). */
export function withTasks(
  extra: Record<string, unknown> = { elicitation: {} },
): Record<string, unknown> {
  return { extensions: { [TASKS_EXT]: {} }, ...extra };
}

/** A 2026-07-28 client over a server process's stdio (served with `extraArgs`, if any). */
export class ModernClient {
  readonly server: RawServer;
  #id = 0;

  constructor(home: string, extraArgs: string[] = []) {
    this.server = new RawServer(home, extraArgs);
  }

  /** Sends a request with the envelope declaring `capabilities`; returns the whole answer. */
  request(
    method: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = withTasks(),
  ): Promise<Message> {
    return this.server.request(++this.#id, method, {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": { name: "waymark-test-2026", version: "1.0.0" },
        ...(params._meta as Record<string, unknown> | undefined),
      },
    });
  }

  /** The result of a request; throws with the error otherwise. */
  async result(
    method: string,
    params: Record<string, unknown>,
    capabilities?: Record<string, unknown>,
  ): Promise<Message> {
    const answer = await this.request(method, params, capabilities);
    if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  }

  /** Calls a tool; the tool result (or task) as answered. */
  call(
    name: string,
    args: Record<string, unknown>,
    extra: { capabilities?: Record<string, unknown>; params?: Record<string, unknown> } = {},
  ): Promise<Message> {
    return this.result(
      "tools/call",
      { name, arguments: args, ...extra.params },
      extra.capabilities,
    );
  }

  /** Closes the server process. */
  close(): Promise<{ code: number; stderr: string }> {
    return this.server.close();
  }
}
