/**
 * The engine's entry point stays narrow: named exports only (a `export *` would publish whatever
 * a module adds), at most {@linkcode BUDGET} runtime names, and each of them used by an adapter
 * or promised to library users. Everything else is imported from the module that defines it, so
 * an adapter depends on what it uses, not on the whole engine.
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join, relative } from "node:path";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runtime names `engine/mod.ts` may export. */
const BUDGET = 100;

/** Runtime exports no adapter uses, kept for library users (`waymark/engine`), with why. */
const LIBRARY_ONLY: Readonly<Record<string, string>> = {
  compileWorkflow: "compiles one parsed workflow file (the Node package test calls it)",
  loadWorkflowFiles: "parses and compiles a set of files with their routines (Node and Deno alike)",
};

/** The project's source outside `engine/` and `tests/`, by path. */
async function adapterSources(dir = ROOT): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    const rel = relative(ROOT, path);
    if (entry.isDirectory) {
      if (/^(engine|tests|node_modules|dist|\.git)$/.test(rel)) continue;
      for (const [k, v] of await adapterSources(path)) out.set(k, v);
    } else if (/\.tsx?$/.test(entry.name)) out.set(rel, await Deno.readTextFile(path));
  }
  return out;
}

/** Whether `source` imports `name` from a module of `engine/`. */
function importsFromEngine(source: string, name: string): boolean {
  const pattern = /(?:import|export)(?:\s+type)?\s*\{([^}]*)\}\s*from\s*"[^"]*engine\/[^"]*"/g;
  for (const m of source.matchAll(pattern)) {
    const names = m[1]!.split(",").map((s) =>
      s.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]
    );
    if (names.includes(name)) return true;
  }
  return false;
}

Deno.test("engine/mod.ts: named exports only, within the budget, each used outside engine/", async () => {
  const text = await Deno.readTextFile(join(ROOT, "engine/mod.ts"));
  assert.doesNotMatch(text, /export\s*\*/, "engine/mod.ts re-exports with *");
  const names = Object.keys(await import("../../engine/mod.ts")).sort();
  assert.ok(names.length <= BUDGET, `${names.length} runtime exports, budget ${BUDGET}`);
  const sources = [...(await adapterSources()).values()];
  const unused = names.filter((n) =>
    !(n in LIBRARY_ONLY) && !sources.some((s) => importsFromEngine(s, n))
  );
  assert.deepEqual(unused, [], "exported by engine/mod.ts but used by no adapter");
  for (const name of Object.keys(LIBRARY_ONLY)) assert.ok(names.includes(name), name);
});

Deno.test("no mod.ts under engine/ re-exports with *", async () => {
  const offenders: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name === "mod.ts" && /export\s*\*/.test(await Deno.readTextFile(path))) {
        offenders.push(relative(ROOT, path));
      }
    }
  };
  await walk(join(ROOT, "engine"));
  assert.deepEqual(offenders, []);
});

Deno.test("the usage check sees a named import from an engine module, and only that", () => {
  const source = 'import { a, type B, c as d } from "../engine/x.ts";\nimport { e } from "./y.ts";';
  assert.ok(importsFromEngine(source, "a"));
  assert.ok(importsFromEngine(source, "B"));
  assert.ok(importsFromEngine(source, "c"));
  assert.ok(!importsFromEngine(source, "d"));
  assert.ok(!importsFromEngine(source, "e"));
});
