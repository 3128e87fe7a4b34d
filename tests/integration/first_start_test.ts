/**
 * The first start fetches only what serving needs: `waymark serve` from a clone runs on a Deno
 * cache that holds none of the packages only tests use (the MCP clients, playwright-core) nor
 * `pg`, which loads only for a `postgres://` database. Offline: the cache is this machine's, with
 * those packages left out, and `--cached-only` turns any fetch of them into a failure.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RawServer } from "../helpers/raw_server.ts";

/** Packages serving must not need: tests' own, and the team store's driver. */
const LEFT_OUT = [
  "playwright-core",
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/client",
  "pg",
  "@types/pg",
];

/** This machine's npm cache folder (`deno info`). */
async function npmCache(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).npmCache;
}

/** `from`'s tree at `to`: folders made, files hard-linked (copied across file systems). */
async function linkTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const [a, b] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory) await linkTree(a, b);
    else if (entry.isSymlink) await Deno.symlink(await Deno.readLink(a), b);
    else await Deno.link(a, b).catch(() => Deno.copyFile(a, b));
  }
}

/**
 * A Deno folder whose npm cache holds every package of `from` but those left out (a real tree:
 * Deno follows a symbolic link to where it leads, outside the folder).
 */
async function cacheWithout(from: string, dir: string): Promise<void> {
  const registry = join(from, "registry.npmjs.org");
  const to = join(dir, "npm", "registry.npmjs.org");
  for await (const entry of Deno.readDir(registry)) {
    const names = entry.name.startsWith("@")
      ? (await Array.fromAsync(Deno.readDir(join(registry, entry.name))))
        .map((s) => `${entry.name}/${s.name}`)
      : [entry.name];
    for (const name of names.filter((n) => !LEFT_OUT.includes(n))) {
      await linkTree(join(registry, name), join(to, name));
    }
  }
}

Deno.test("serve answers its first call from a cache without the test-only packages and pg", async () => {
  const denoDir = await Deno.makeTempDir({ prefix: "waymark-deno-dir-" });
  const home = await Deno.makeTempDir({ prefix: "waymark-first-" });
  try {
    await cacheWithout(await npmCache(), denoDir);
    const server = new RawServer(home, [], {
      denoFlags: ["--cached-only"],
      env: { DENO_DIR: denoDir },
    });
    try {
      // a cold start compiles waymark's TypeScript first: minutes on a busy machine, not 10 s
      await server.handshake("first-start", 120_000);
      const listed = await server.request(2, "tools/call", {
        name: "list_workflows",
        arguments: {},
      }, 120_000);
      assert.ok(listed.result?.structuredContent.workflows.length > 0, JSON.stringify(listed));
      const closed = await server.close();
      assert.equal(closed.code, 0, closed.stderr);
    } catch (error) {
      server.kill();
      const { stderr } = await server.close();
      throw new Error(`${(error as Error).message}\n${stderr}`);
    }
  } finally {
    await Deno.remove(denoDir, { recursive: true }).catch(() => {});
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
