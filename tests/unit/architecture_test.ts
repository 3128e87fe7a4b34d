/**
 * The dependency direction: `engine/` imports nothing from the adapters, touches no runtime API
 * (`Deno.`, `node:`), no clock and no randomness, so it stays deterministic and runs anywhere;
 * and no module imports itself in a cycle.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dirname, join, relative, resolve } from "node:path";
import { MAX_FUNCTION_LINES, oversized, PRODUCT_CODE } from "../helpers/code_size.ts";
import { importMapPins, PIN_FILE, pinProblems, repin, sourceFiles } from "../../scripts/pins.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && entry.name !== "node_modules") out.push(...await tsFiles(path));
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

function imports(source: string): string[] {
  const found: string[] = [];
  const pattern =
    /(?:^|\n)\s*(?:import|export)[^"';]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of source.matchAll(pattern)) found.push((m[1] ?? m[2])!);
  return found;
}

/** Violations of engine purity in one file's source. */
export function purityViolations(source: string, file: string): string[] {
  const problems: string[] = [];
  for (const spec of imports(source)) {
    if (spec.startsWith("node:")) problems.push(`${file} imports ${spec}`);
    if (spec.startsWith(".")) {
      const target = relative(ROOT, resolve(dirname(join(ROOT, file)), spec));
      if (!target.startsWith("engine/")) problems.push(`${file} imports ${spec} (outside engine/)`);
    }
  }
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  for (
    const [pattern, what] of [
      [/\bDeno\./, "Deno.*"],
      [/\bprocess\./, "process.*"],
      [/\bnew Date\(|\bDate\.now\(/, "the clock"],
      [/\bperformance\.now\(/, "the clock"],
      [/\bMath\.random\(/, "randomness"],
      [/\bgetRandomValues\(|\brandomUUID\(/, "randomness"],
      [/\bfetch\(/, "the network"],
    ] as const
  ) {
    if (pattern.test(code)) problems.push(`${file} touches ${what}`);
  }
  return problems;
}

Deno.test("engine/ imports nothing from store/, tools/, web/, node: and touches no runtime API", async () => {
  const files = await tsFiles(join(ROOT, "engine"));
  assert.ok(files.length > 10, "engine/ has its files");
  const problems: string[] = [];
  for (const path of files) {
    problems.push(...purityViolations(await Deno.readTextFile(path), relative(ROOT, path)));
  }
  assert.deepEqual(problems, []);
});

Deno.test("the purity check catches each kind of violation", () => {
  const bad = [
    'import { openStore } from "../../store/mod.ts";',
    'import { x } from "../../tools/server/server.ts";',
    'import { y } from "../web/mod.ts";',
    'import { readFile } from "node:fs/promises";',
    "const t = Deno.env.get('X');",
    "const now = Date.now();",
    "const r = Math.random();",
  ];
  for (const line of bad) {
    assert.ok(
      purityViolations(line, line.includes("../web/") ? "engine/x.ts" : "engine/use_cases/x.ts")
        .length > 0,
      `not caught: ${line}`,
    );
  }
  assert.deepEqual(
    purityViolations('import { z } from "zod";\n// Deno.exit in a comment', "engine/x.ts"),
    [],
  );
});

Deno.test("no circular imports among the project's modules", async () => {
  const files = (await Promise.all(
    ["engine", "store", "tools", "web", "workflows", "cli"].map((d) => tsFiles(join(ROOT, d))),
  ))
    .flat().concat([join(ROOT, "main.ts"), join(ROOT, "mod.ts")]);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const deps = imports(await Deno.readTextFile(file)).filter((s) => s.startsWith("."))
      .map((s) => resolve(dirname(file), s));
    graph.set(file, deps);
  }
  const state = new Map<string, "visiting" | "done">();
  const cycles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "visiting") {
      cycles.push(
        [...path.slice(path.indexOf(file)), file].map((f) => relative(ROOT, f)).join(" -> "),
      );
      return;
    }
    state.set(file, "visiting");
    for (const dep of graph.get(file) ?? []) visit(dep, [...path, file]);
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file, []);
  assert.deepEqual(cycles, []);
});

Deno.test("every npm specifier names the version tests/deno.json pins, and source uses no bare package names", async () => {
  const pins = await importMapPins();
  const stale: string[] = [];
  const bare: string[] = [];
  for (const file of await sourceFiles()) {
    const text = await Deno.readTextFile(join(ROOT, file));
    stale.push(...pinProblems(text, pins).map((problem) => `${file}: ${problem}`));
    if (file.startsWith("tests/")) continue;
    for (const spec of imports(text)) {
      if (!/^(\.|node:|npm:)/.test(spec)) bare.push(`${file}: ${spec}`);
    }
  }
  assert.deepEqual(stale, [], `${PIN_FILE}'s imports choose the versions: run \`deno task pins\``);
  assert.deepEqual(bare, [], "source must run from a URL with no import map");
  assert.ok(pins.has("zod") && pins.has("@libsql/client"));
});

Deno.test("the workspace's import map holds only packages waymark imports, so `deno task` (which installs it first) needs nothing the bundle does not", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "tests/deno.json")));
  const mapped = new Set(
    Object.values(config.imports as Record<string, string>).map((target) =>
      /^npm:((?:@[^/@]+\/)?[^/@]+)@/.exec(target)![1]!
    ),
  );
  const product = new Set<string>();
  for (const file of await sourceFiles()) {
    if (file.startsWith("tests/") || file.startsWith("scripts/")) continue;
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const spec of imports(text)) {
      const name = /^npm:((?:@[^/@]+\/)?[^/@]+)@/.exec(spec)?.[1];
      if (name) product.add(name);
    }
  }
  assert.deepEqual([...mapped].filter((name) => !product.has(name)), []);
});

Deno.test("the pin check catches a copy that differs from tests/deno.json, and repin fixes it", () => {
  // spelled in pieces, so that this file's own text holds no pinned specifier
  const npm = (pin: string) => `npm:${pin}`;
  const pins = new Map([["zod", "4.6.7"], ["@types/pg", "8.23.1"]]);
  const text = `import { z } from "${npm("zod@4.5.0")}";\n` +
    `// @ts-types="${npm("@types/pg@8.23.1")}"\n` +
    `import x from "${npm("left-pad@1.3.0")}/sub";\n`;
  const unknown = `${npm("left-pad@1.3.0")} (not in ${PIN_FILE})`;
  assert.deepEqual(pinProblems(text, pins), [
    `${npm("zod@4.5.0")} (${PIN_FILE}: 4.6.7)`,
    unknown,
  ]);
  assert.deepEqual(pinProblems(repin(text, pins), pins), [unknown]);
});

Deno.test("tools/ tells protocol revisions apart only in tools/revisions/", async () => {
  const files = (await tsFiles(join(ROOT, "tools"))).filter((f) =>
    !relative(ROOT, f).startsWith("tools/revisions/")
  );
  const tells = [
    [/["'`]20\d\d-\d\d-\d\d["'`]/, "a revision's name"],
    [/getNegotiatedProtocolVersion\(/, "the negotiated revision"],
    [/mcpReq\.envelope\b/, "the per-request envelope"],
  ] as const;
  const problems: string[] = [];
  for (const file of files) {
    const code = (await Deno.readTextFile(file)).replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    for (const [pattern, what] of tells) {
      if (pattern.test(code)) problems.push(`${relative(ROOT, file)} reads ${what}`);
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("the roots of engine/ and tools/ hold only their entry file beside folders by concern", async () => {
  const loose: string[] = [];
  for (const dir of ["engine", "tools"]) {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      if (entry.isFile && entry.name !== "mod.ts") loose.push(`${dir}/${entry.name}`);
    }
  }
  assert.deepEqual(loose, [], "put each file in the folder of its concern (docs/architecture.md)");
});

Deno.test("no product function over 80 lines, no product file over 500", async () => {
  const found: string[] = [];
  for (const top of PRODUCT_CODE) {
    const path = join(ROOT, top);
    const files = (await Deno.stat(path)).isFile ? [path] : await tsFiles(path);
    for (const file of files) {
      found.push(...oversized(relative(ROOT, file), await Deno.readTextFile(file)));
    }
  }
  assert.deepEqual(found, [], "split them: a function does one thing, a file holds one concern");
});

Deno.test("the size check counts declarations, methods and arrows, nested ones inside their parent", () => {
  const body = (n: number) =>
    Array.from({ length: n }, (_, i) => `  const a${i} = ${i};`).join("\n");
  const long = MAX_FUNCTION_LINES - 2; // with its first and last lines: exactly the limit
  const text = [
    `function fits() {\n${body(long)}\n}`,
    `function over() {\n${body(long + 1)}\n}`,
    `class K {\n  method() {\n${body(long + 1)}\n  }\n}`,
    `const arrow = () => {\n${body(long + 1)}\n};`,
    `function outer() {\n  const inner = () => {\n${body(long + 1)}\n  };\n}`,
  ].join("\n");
  const found = oversized("x.ts", text);
  assert.deepEqual(found.filter((f) => !f.includes("the file")).map((f) => f.split(": ")[1]), [
    "81 lines",
    "81 lines",
    "81 lines",
    "83 lines",
    "81 lines",
  ]);
  assert.deepEqual(found.filter((f) => f.includes("the file")), []);
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const a${i} = ${i};\n`);
  assert.deepEqual(oversized("z.ts", lines(500).join("")), []);
  assert.deepEqual(oversized("z.ts", lines(501).join("")), ["z.ts: the file has 501 lines"]);
  assert.deepEqual(oversized("y.ts", `function fits() {\n${body(long)}\n}\n`), []);
});
