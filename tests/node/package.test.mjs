/**
 * The npm build as a Node user gets it: `dist/` (from `deno task build:npm`) is packed with
 * `npm pack`, installed from the tarball into a fresh project, and imported by its package name
 * (so `exports` and the dependencies are what resolve it). It then runs a bundled workflow to
 * completion on a real libSQL file, replays a call, reopens the file, and type-checks a small
 * TypeScript consumer against the published declarations.
 *
 * Run: `deno task build:npm && node --test tests/node/*.test.mjs` (`deno task test` does both).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";

// `deno test tests/` collects `*.test.mjs` files too. This suite is Node's (Deno's test suite runs
// it with `node --test` from tests/integration/node_package_test.ts), so under Deno it is empty.
const UNDER_DENO = "Deno" in globalThis;
const { after, before, test } = UNDER_DENO
  ? { after() {}, before() {}, test() {} }
  : await import("node:test");

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIST = join(ROOT, "dist");
const TOOLCHAIN = join(ROOT, "node_modules", ".cache", "waymark-build-npm", "node_modules");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** The consumer project, the package as imported from it, and @libsql/client for a 2nd look. */
let project = "";
// Untyped on purpose: dist/ does not exist until the build runs, and Deno's type check of the
// test tree must not depend on it.
let waymark;
let engine;
let libsql;

async function npm(args, cwd) {
  const env = { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" };
  try {
    return (await run(NPM, args, { cwd, env, maxBuffer: 16 << 20 })).stdout;
  } catch (error) {
    throw new Error(`npm ${args.join(" ")} failed:\n${error.stdout ?? ""}${error.stderr ?? ""}`);
  }
}

before(async () => {
  assert.ok(
    existsSync(join(DIST, "package.json")) && existsSync(join(DIST, "mod.js")),
    "dist/ has no build: run `deno task build:npm` first",
  );
  project = await mkdtemp(join(tmpdir(), "waymark-node-"));
  const packed = JSON.parse(await npm(["pack", DIST, "--json", "--pack-destination", project]));
  const tarball = packed[0].filename;
  await writeFile(
    join(project, "package.json"),
    JSON.stringify({
      name: "waymark-node-consumer",
      private: true,
      type: "module",
      dependencies: { waymark: `file:./${tarball}` },
    }),
  );
  await npm(
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"],
    project,
  );
  // Imported from inside the project, so "waymark" resolves as it would for a user.
  await writeFile(
    join(project, "entry.mjs"),
    'export * as waymark from "waymark";\nexport * as engine from "waymark/engine";\n' +
      'export * as libsql from "@libsql/client";\n',
  );
  ({ waymark, engine, libsql } = await import(pathToFileURL(join(project, "entry.mjs")).href));
});

after(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

test("the installed package exposes mod.js and mod.d.ts through exports", async () => {
  const installed = join(project, "node_modules", "waymark");
  const pkg = JSON.parse(await readFile(join(installed, "package.json"), "utf8"));
  assert.equal(pkg.name, "waymark");
  assert.equal(pkg.type, "module");
  assert.equal(pkg.version, waymark.VERSION);
  assert.equal(waymark.BUILD_KIND, "npm", "the npm build says what it is");
  assert.deepEqual(pkg.exports["."], { types: "./mod.d.ts", import: "./mod.js" });
  assert.equal(pkg.engines.node, ">=20");
  const dts = await readFile(join(installed, "mod.d.ts"), "utf8");
  assert.match(dts, /export declare function openWaymark\(/);
  assert.match(dts, /export interface Waymark\b/);
  // No Deno-only specifiers leak into what Node or tsc would resolve.
  const js = await readFile(join(installed, "mod.js"), "utf8");
  assert.doesNotMatch(js, /["']npm:|\bDeno\.[A-Za-z]/);
  assert.equal(typeof waymark.openWaymark, "function");
  assert.equal(typeof waymark.createMcpServer, "function");
  // The root is small; the rest is at subpaths, sharing one copy of each class.
  assert.equal(waymark.compileWorkflow, undefined);
  assert.deepEqual(pkg.exports["./engine"], {
    types: "./engine/mod.d.ts",
    import: "./engine/mod.js",
  });
  assert.equal(typeof engine.compileWorkflow, "function");
  assert.equal(engine.startWorkflow, waymark.startWorkflow, "one module instance per function");
});

test("a bundled workflow runs to completion on a libSQL file; a replay is identical", async () => {
  const home = join(project, "home");
  const w = await waymark.openWaymark({ home, workspace: project });
  let last;
  let runId;
  let steps = 0;
  try {
    assert.equal(w.paths.dbUrl, `file:${join(home, "waymark.db")}`);
    const listed = await w.list();
    assert.ok(listed.ok, JSON.stringify(listed));
    const ids = listed.value.workflows.map((workflow) => workflow.id);
    for (
      const id of ["waymark.bug_investigation", "waymark.code_review", "waymark.feature_planning"]
    ) {
      assert.ok(ids.includes(id), `${id} listed: ${ids}`);
    }
    assert.deepEqual(listed.value.loadErrors, []);

    const started = await w.start({ workflowId: "waymark.code_review", goal: "review from Node" });
    assert.ok(started.ok, JSON.stringify(started));
    let current = started.value;
    assert.equal(current.isComplete, false);
    // a start names its run; acknowledgements leave out what did not change
    runId = current.session.runId;
    const visited = [];
    let input;
    while (!current.isComplete) {
      assert.ok(visited.length < 30, "the walk terminates");
      assert.ok(current.pending && current.ackToken, "a pending step with an ack token");
      visited.push(current.pending.stepId);
      input = {
        stateToken: current.stateToken,
        ackToken: current.ackToken,
        output: {
          notesMarkdown: `Did ${current.pending.stepId} from Node.`,
          // the findings step's contract: its example is a valid verdict
          artifacts: current.pending.outputContract ? [current.pending.outputContract.example] : [],
        },
      };
      const next = await w.continue(input);
      assert.ok(next.ok, JSON.stringify(next));
      assert.equal(next.value.kind, "ok", JSON.stringify(next.value.blockers));
      current = next.value;
    }
    assert.ok(visited.length >= 2, `walked ${visited}`);
    steps = visited.length;
    assert.equal(current.pending, null);
    assert.equal(current.ackToken, undefined);
    last = current;

    // Replaying the last acknowledgement returns the recorded answer, unchanged.
    const replay = await w.continue(input);
    assert.ok(replay.ok, JSON.stringify(replay));
    assert.deepEqual(replay.value, current);
    assert.equal(JSON.stringify(replay.value), JSON.stringify(current));
  } finally {
    await w.close();
  }

  // A real database file, readable by a second libSQL connection.
  const file = join(home, "waymark.db");
  assert.ok((await stat(file)).size > 0);
  const db = libsql.createClient({ url: `file:${file}` });
  try {
    const nodes = await db.execute("SELECT count(*) AS n FROM nodes");
    assert.ok(Number(nodes.rows[0].n) > steps, `nodes stored: ${nodes.rows[0].n}`);
    const events = await db.execute("SELECT count(*) AS n FROM events");
    assert.ok(Number(events.rows[0].n) > 0, "events stored");
  } finally {
    db.close();
  }

  // Reopened, the same file still knows the run: rehydrating the final snapshot says complete.
  const again = await waymark.openWaymark({ home, workspace: project });
  try {
    const rehydrated = await again.continue({ stateToken: last.stateToken });
    assert.ok(rehydrated.ok, JSON.stringify(rehydrated));
    assert.equal(rehydrated.value.isComplete, true);
    assert.equal(rehydrated.value.session.runId, runId);
  } finally {
    await again.close();
  }
});

test("the declarations type-check a TypeScript consumer", async (t) => {
  const tsc = join(TOOLCHAIN, "typescript", "bin", "tsc");
  if (!existsSync(tsc)) {
    t.skip("typescript is installed by `deno task build:npm`; not found");
    return;
  }
  const dir = join(project, "ts");
  await mkdir(dir);
  await writeFile(
    join(dir, "consumer.ts"),
    `import { openWaymark, type Result, type StepResponse, type Waymark } from "waymark";

const w: Waymark = await openWaymark({ dbUrl: ":memory:", home: "./home" });
const started: Result<StepResponse> = await w.start({ workflowId: "waymark.code_review" });
if (started.ok) {
  const step: string | undefined = started.value.pending?.stepId;
  const complete: boolean = started.value.isComplete === true;
  console.log(step, complete);
} else {
  const code: string = started.error.code;
  console.log(code);
}
// @ts-expect-error workflowId is a string (fails if the declarations resolved to \`any\`)
await w.start({ workflowId: 42 });
await w.close();
export {};
`,
  );
  await writeFile(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2023"],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        typeRoots: [join(TOOLCHAIN, "@types")],
        types: ["node"],
      },
      files: ["consumer.ts"],
    }),
  );
  // The project's package.json says "type": "module"; tsc runs from the toolchain's copy.
  try {
    await run(process.execPath, [tsc, "-p", dir], { cwd: dir });
  } catch (error) {
    assert.fail(`tsc failed on a consumer of the declarations:\n${error.stdout}${error.stderr}`);
  }
});
