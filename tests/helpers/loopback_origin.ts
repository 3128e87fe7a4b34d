/**
 * Files served over loopback HTTP for a `deno run <url>` (the checkout, a built bundle), and what
 * such a run leaves in Deno's cache. Each server listens on a port of its own, and Deno keeps a
 * remote module's source and emitted code by origin, port included: every run of the suite would
 * add a few MB under `remote/` and `gen/` that nothing reads again. Closing the server removes its
 * origin's folders; runs of a module at a path or URL used once pass {@linkcode ONCE} so that V8's
 * code cache (a few MB for the bundle) is not kept for it either.
 * @module
 */
import { join } from "node:path";

/** `deno run` flags for a module at a path or URL no later run uses. */
export const ONCE: readonly string[] = ["--no-code-cache"];

let denoDir: Promise<string> | undefined;

/** Deno's cache folder, as `deno info` names it. */
function cacheDir(): Promise<string> {
  return denoDir ??= new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output()
    .then((out) => JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string);
}

/**
 * Serves `handler` on 127.0.0.1 at a free port; `close` stops it and removes what Deno cached
 * from its origin.
 */
export function serveOnLoopback(
  handler: (request: Request) => Response | Promise<Response>,
): { origin: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const { port } = server.addr;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      await server.shutdown();
      const dir = await cacheDir();
      for (const kind of ["remote", "gen"]) {
        const folder = join(dir, kind, "http", `127.0.0.1_PORT${port}`);
        await Deno.remove(folder, { recursive: true }).catch(() => {});
      }
    },
  };
}
