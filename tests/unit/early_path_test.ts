/**
 * The start-up path of `waymark serve` (`main.ts` and what it imports at runtime) loads nothing
 * of the engine or the store: it answers the handshake and `tools/list` before they load
 * (`tools/server/early_server.ts`), and they come on demand through `lazy.ts`. The static import graph
 * is read from `deno info --json`: an `import type` or a computed `import()` is no runtime edge.
 * The few modules it may take from `engine/` and `store/` (closed sets and parsers the flags
 * validate with, which load no other module of either) are named here with why.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { relative } from "node:path";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Modules of `engine/` or `store/` the start-up path may load, and why. */
const EARLY_LEAVES: Readonly<Record<string, string>> = {
  "engine/model/vocabulary.ts":
    "the closed sets (--status is checked against the session statuses)",
  "store/maintenance/duration.ts": "durations (--older-than)",
  "store/db_url.ts": "the database URLs --db accepts (imports nothing)",
  "store/open_options.ts":
    "the busy timeout and durability defaults the flags show (imports nothing)",
  "config/auth_settings.ts":
    "the URL and scope schemas the --auth-* flags are checked with (imports only zod)",
};

/** One module of `deno info --json`. */
interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier?: string } }[];
}

/** Every specifier reachable from the roots by runtime (`code`) edges. */
function reachable(info: { roots: string[]; modules: InfoModule[] }): Set<string> {
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...info.roots];
  while (stack.length > 0) {
    const specifier = stack.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dep.code?.specifier) stack.push(dep.code.specifier);
    }
  }
  return seen;
}

/** The local modules reachable from `root` by runtime (`code`) edges, relative to the root. */
export function runtimeClosure(info: { roots: string[]; modules: InfoModule[] }): Set<string> {
  return new Set(
    [...reachable(info)].filter((s) => s.startsWith("file:"))
      .map((s) => relative(ROOT, fileURLToPath(s))),
  );
}

/** The npm packages reachable from the roots by runtime (`code`) edges, by name. */
export function npmPackages(info: { roots: string[]; modules: InfoModule[] }): Set<string> {
  return new Set(
    [...reachable(info)].flatMap((s) => s.match(/^npm:\/?((?:@[^/@]+\/)?[^/@]+)/)?.[1] ?? []),
  );
}

/** What on the start-up path is of the engine or the store and not a named leaf. */
export function earlyViolations(closure: Set<string>): string[] {
  return [...closure].filter((path) => /^(engine|store)\//.test(path) && !(path in EARLY_LEAVES))
    .sort();
}

async function denoInfo(entry: string): Promise<{ roots: string[]; modules: InfoModule[] }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

Deno.test("the start-up path of waymark serve loads nothing of engine/ or store/ at runtime", async () => {
  const entry = await denoInfo("main.ts");
  const serve = await denoInfo("cli/serve_early.ts");
  const closure = new Set([...runtimeClosure(entry), ...runtimeClosure(serve)]);
  assert.ok(
    closure.has("tools/server/early_server.ts"),
    "the early server is on the start-up path",
  );
  assert.ok(closure.has("lazy.ts") && !closure.has("cli/mod.ts"), "the commands load on demand");
  // the other commands and the hook load neither the serving code nor the MCP SDK
  const commands = runtimeClosure(entry);
  assert.ok(!commands.has("tools/server/early_server.ts"), "serving stdio loads on demand");
  const npm = [...npmPackages(entry)].filter((p) => p.startsWith("@modelcontextprotocol/"));
  assert.deepEqual(npm, [], "the entry loads no MCP package");
  assert.ok(npmPackages(serve).has("@modelcontextprotocol/server"), "serving stdio does");
  assert.deepEqual(earlyViolations(closure), []);
  // the list of leaves names only what is still on the path
  assert.deepEqual(Object.keys(EARLY_LEAVES).filter((leaf) => !closure.has(leaf)), []);
});

Deno.test("the commands and those on the store load no MCP package until they serve", async () => {
  for (const entry of ["cli/mod.ts", "cli/store_commands.ts"]) {
    const npm = [...npmPackages(await denoInfo(entry))];
    assert.deepEqual(npm.filter((p) => p.startsWith("@modelcontextprotocol/")), [], entry);
  }
  assert.ok(npmPackages(await denoInfo("cli/serve.ts")).has("@modelcontextprotocol/server"));
});

Deno.test("the check catches a runtime edge into the engine, and not a type-only one", () => {
  const file = (path: string) => new URL(path, `file://${ROOT}`).href;
  const info = {
    roots: [file("main.ts")],
    modules: [
      {
        specifier: file("main.ts"),
        dependencies: [
          { code: { specifier: file("tools/server/early_server.ts") } },
          { type: { specifier: file("store/mod.ts") } } as never,
        ],
      },
      {
        specifier: file("tools/server/early_server.ts"),
        dependencies: [{ code: { specifier: file("engine/mod.ts") } }],
      },
    ],
  };
  assert.deepEqual(earlyViolations(runtimeClosure(info)), ["engine/mod.ts"]);
});
