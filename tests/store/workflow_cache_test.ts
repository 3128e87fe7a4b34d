/**
 * The workflow-file cache in the store (`workflow_files`, `workflow_outcomes`), on libSQL and on
 * PostgreSQL: a new process (a fresh workflow source over the same database) answers exactly as
 * one that compiles everything, from the cache; edits, routines, broken files and recent edits
 * are handled as without it; a cache that fails costs nothing but time; the tables stay bounded.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL as toFileUrl } from "node:url";
import type { WorkflowSource } from "../../engine/model/ports.ts";
import { summarize } from "../../engine/use_cases/list_workflows.ts";
import {
  createWorkflowSource,
  type OpenedSqlStore,
  openStore,
  type SourceDir,
  sqlWorkflowCache,
  WORKFLOW_CACHE_ROWS,
  type WorkflowCache,
} from "../../store/mod.ts";
import { compilerIdentity, seal, unseal } from "../../store/workflow_files/cache.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { freshPostgresUrl, postgresBin } from "../helpers/postgres.ts";
import { CORPUS_DIR, corpusFiles } from "../helpers/corpus.ts";

const steps = (prompt: string) => [{ id: "s", title: "S", prompt }];
const file = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id, name: id, description: "d", version: "1", steps: steps(id), ...extra });
const caller = (id: string) =>
  file(id, {
    steps: [
      { id: "s", title: "S", prompt: "s" },
      { id: "c", title: "C", templateCall: { templateId: "team.templates.routine.check" } },
    ],
  });

/** An hour ago: files this old are indexed by their version (newer ones are read again). */
const settled = async (path: string) => {
  const past = new Date(Date.now() - 3_600_000);
  await Deno.utime(path, past, past);
};

interface Fixture {
  dirs: SourceDir[];
  user: string;
  project: string;
  store: OpenedSqlStore;
  cache: WorkflowCache;
  /** A source over the cache, as a new process would make it. */
  cached(cache?: WorkflowCache): WorkflowSource;
  /** A source without a cache: everything read and compiled. */
  cold(): WorkflowSource;
  cleanup(): Promise<void>;
}

const DIALECTS: Record<string, (dir: string) => Promise<string>> = {
  libsql: (dir) => Promise.resolve(`file:${join(dir, "waymark.db")}`),
  ...(postgresBin() || Deno.env.get("CI") ? { postgres: () => freshPostgresUrl() } : {}),
};

async function fixture(dialect: string): Promise<Fixture> {
  const root = await Deno.makeTempDir({ prefix: "waymark-cache-" });
  const dirs: SourceDir[] = [
    { source: "user", dir: join(root, "user") },
    { source: "project", dir: join(root, "project") },
  ];
  for (const d of dirs) await Deno.mkdir(d.dir);
  const files: [string, string][] = [
    ["user/plain.json", file("team.plain")],
    ["user/dup.json", file("team.dup")],
    ["project/dup.json", file("team.dup", { version: "2" })],
    ["project/check.json", file("team.routine-check")],
    ["user/caller.jsonc", `// comments are fine\n${caller("team.caller")}`],
    ["user/legacy.json", file("legacy_id")],
    ["user/reserved.json", file("waymark.mine")],
    ["user/syntax.json", "{ not json"],
    ["user/invalid.json", JSON.stringify({ id: "team.invalid", steps: [] })],
  ];
  for (const [name, text] of files) {
    await Deno.writeTextFile(join(root, name), text);
    await settled(join(root, name));
  }
  const store = await openStore(await DIALECTS[dialect]!(root));
  const cache = sqlWorkflowCache(store);
  return {
    dirs,
    user: dirs[0]!.dir,
    project: dirs[1]!.dir,
    store,
    cache,
    cached: (c = cache) => createWorkflowSource(BUNDLED_WORKFLOWS, dirs, { cache: c }),
    cold: () => createWorkflowSource(BUNDLED_WORKFLOWS, dirs),
    async cleanup() {
      await store.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

/**
 * Both sources give the same answers, compared strictly (an outcome read back from the cache
 * must not differ from a fresh compile even in a key set to `undefined`).
 */
async function assertSameAnswers(actual: WorkflowSource, expected: WorkflowSource) {
  const want = await expected.load();
  assert.deepStrictEqual(await actual.load(), want);
  assert.deepStrictEqual(await actual.summaries!(), {
    workflows: want.workflows.map(summarize),
    errors: want.errors,
  });
  for (const id of [...want.workflows.map((w) => w.id), "team.nowhere", "waymark.mine"]) {
    assert.deepStrictEqual(await actual.find!(id), await expected.find!(id), id);
  }
}

const count = async (store: OpenedSqlStore, table: "workflow_files" | "workflow_outcomes") =>
  Number(
    (await store.db.selectFrom(table).select((eb) => eb.fn.countAll().as("n")).executeTakeFirst())
      ?.n,
  );

for (const dialect of Object.keys(DIALECTS)) {
  Deno.test(`[${dialect}] a new process answers from the cache exactly as one that compiles everything`, async () => {
    const f = await fixture(dialect);
    try {
      // each new source, over the same database, is a new process
      await assertSameAnswers(f.cached(), f.cold()); // fills the cache
      assert.ok(await count(f.store, "workflow_files") >= 12, "files indexed");
      assert.ok(await count(f.store, "workflow_outcomes") >= 12, "outcomes stored");
      await assertSameAnswers(f.cached(), f.cold()); // from the cache
      // lookups alone, in fresh processes, agree too (nothing listed first)
      for (
        const id of ["team.plain", "team.dup", "team.caller", "legacy_id", "waymark.code_review"]
      ) {
        assert.equal((await f.cached().find!(id))?.hash, (await f.cold().find!(id))?.hash, id);
      }
      const listed = await f.cached().summaries!();
      assert.equal(listed.workflows.find((w) => w.id === "team.dup")?.source, "user");
      assert.deepEqual(
        listed.errors.map((e) => e.file.split("/").slice(-2).join("/")).sort(),
        ["project/dup.json", "user/invalid.json", "user/reserved.json", "user/syntax.json"],
      );
    } finally {
      await f.cleanup();
    }
  });

  Deno.test(`[${dialect}] outcomes are reused by digest; an edited file or routine is compiled again`, async () => {
    const f = await fixture(dialect);
    try {
      const first = await f.cached().find!("team.plain");
      const callerBefore = await f.cached().find!("team.caller");
      assert.ok(first && callerBefore);
      // mark the stored outcome: a new process serves the mark, so it did not compile the file
      const rows = await f.store.db.selectFrom("workflow_outcomes").selectAll().execute();
      const row = rows.find((r) => unseal(r.outcome)?.ok && r.outcome.includes(first.hash))!;
      const marked = row.outcome.slice(65).replace(
        '"name":"team.plain"',
        '"name":"from the cache"',
      );
      const setOutcome = (outcome: string) =>
        f.store.db.updateTable("workflow_outcomes").set({ outcome })
          .where("digest", "=", row.digest).execute();
      await setOutcome(seal(JSON.parse(marked)));
      assert.equal((await f.cached().find!("team.plain"))?.compiled.name, "from the cache");
      // a row damaged on disk fails its checksum: compiled again, not served
      await setOutcome(`${row.outcome.slice(0, 65)}${marked}`);
      assert.deepStrictEqual(await f.cached().find!("team.plain"), first);

      await Deno.writeTextFile(join(f.user, "plain.json"), file("team.plain", { version: "2" }));
      const edited = await f.cached().find!("team.plain");
      assert.equal(edited?.compiled.name, "team.plain");
      assert.notEqual(edited?.hash, first.hash);
      assert.equal(edited?.hash, (await f.cold().find!("team.plain"))?.hash);

      await Deno.writeTextFile(
        join(f.project, "check.json"),
        file("team.routine-check", { steps: steps("changed routine") }),
      );
      const callerAfter = await f.cached().find!("team.caller");
      assert.notEqual(callerAfter?.hash, callerBefore.hash, "the routine is inside the hash");
      assert.equal(callerAfter?.hash, (await f.cold().find!("team.caller"))?.hash);

      await Deno.remove(join(f.user, "plain.json"));
      assert.equal(await f.cached().find!("team.plain"), null);
      await assertSameAnswers(f.cached(), f.cold());
    } finally {
      await f.cleanup();
    }
  });

  Deno.test(`[${dialect}] a file at a version the index knows is not read; a recent edit is not indexed`, async () => {
    const f = await fixture(dialect);
    try {
      await f.cached().load();
      const paths = await f.store.db.selectFrom("workflow_files").select(["path", "digest"])
        .execute();
      const plain = paths.find((p) => p.path.endsWith("user/plain.json"))!;
      const dup = paths.find((p) => p.path.endsWith("user/dup.json"))!;
      // point plain.json's row at dup.json's text: the row decides, the file is not read
      await f.store.db.updateTable("workflow_files").set({ digest: dup.digest })
        .where("path", "=", plain.path).execute();
      assert.equal(await f.cached().find!("team.plain"), null);

      // a file written just now is read by every process until it is a few seconds old
      await Deno.writeTextFile(join(f.user, "fresh.json"), file("team.fresh"));
      assert.ok(await f.cached().find!("team.fresh"));
      const indexed = async () =>
        (await f.store.db.selectFrom("workflow_files").select("path").execute())
          .some((r) => r.path.endsWith("fresh.json"));
      assert.equal(await indexed(), false);
      await settled(join(f.user, "fresh.json"));
      assert.ok(await f.cached().find!("team.fresh"));
      assert.equal(await indexed(), true);
    } finally {
      await f.cleanup();
    }
  });

  Deno.test(`[${dialect}] the cache keeps its newest ${WORKFLOW_CACHE_ROWS} rows of each kind`, async () => {
    const f = await fixture(dialect);
    try {
      let tick = Date.parse("2030-01-01T00:00:00.000Z");
      const cache = sqlWorkflowCache(f.store, { now: () => new Date(tick += 1000).toISOString() });
      const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => `${from + i}`);
      for (let from = 0; from < WORKFLOW_CACHE_ROWS + 300; from += 700) {
        const keys = rows(from, 700);
        await cache.save({
          files: keys.map((k) => ({
            source: "user",
            path: `/x/${k}.json`,
            version: "v",
            digest: k,
            workflowId: null,
          })),
          outcomes: keys.map((k) => ({
            digest: k,
            routinesKey: null,
            result: { ok: false, error: { file: k, issues: [] } },
            listed: { ok: false, error: { file: k, issues: [] } },
          })),
        });
      }
      assert.equal(await count(f.store, "workflow_files"), WORKFLOW_CACHE_ROWS);
      assert.equal(await count(f.store, "workflow_outcomes"), WORKFLOW_CACHE_ROWS);
      assert.deepEqual(await cache.files(["/x/0.json"]), [], "the oldest went first");
      assert.equal((await cache.files([`/x/${WORKFLOW_CACHE_ROWS + 299}.json`])).length, 1);
    } finally {
      await f.cleanup();
    }
  });
}

Deno.test("a cache that fails costs time only: every answer is the same", async () => {
  const f = await fixture("libsql");
  try {
    const failing: WorkflowCache = {
      files: () => Promise.reject(new Error("down")),
      outcomes: () => Promise.reject(new Error("down")),
      summaries: () => Promise.reject(new Error("down")),
      save: () => Promise.reject(new Error("down")),
    };
    await assertSameAnswers(f.cached(failing), f.cold());
    await f.store.close();
    await assertSameAnswers(f.cached(), f.cold()); // the store itself closed
  } finally {
    await f.cleanup().catch(() => {});
  }
});

Deno.test({
  name: "the WorkRail corpus reads back from the cache exactly as it compiles",
  ignore: CORPUS_DIR === null,
  async fn() {
    const f = await fixture("libsql");
    try {
      for (const { rel, text } of corpusFiles()) {
        const data = JSON.parse(text);
        if (typeof data?.id === "string") data.id = data.id.replace(/^wr\./, "corpus.");
        const path = join(f.project, rel.replaceAll("/", "_"));
        await Deno.writeTextFile(path, JSON.stringify(data));
        await settled(path);
      }
      await f.cached().load(); // fills the cache
      await assertSameAnswers(f.cached(), f.cold());
    } finally {
      await f.cleanup();
    }
  },
});

Deno.test("in a checkout, an edit of the compiler's sources changes the compiler's identity", async () => {
  const root = await Deno.makeTempDir({ prefix: "waymark-identity-" });
  try {
    const tree = [
      "store/workflow_files/cache.ts",
      "engine/model/ids.ts",
      "engine/workflow/compile.ts",
    ];
    tree.push("engine/use_cases/list_workflows.ts", "engine/run/advance.ts");
    for (const rel of tree) {
      await Deno.mkdir(join(root, rel, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, rel), "// source");
    }
    const identity = () =>
      compilerIdentity(toFileUrl(join(root, "store/workflow_files/cache.ts")).href);
    const before = identity();
    assert.match(before, /^[0-9a-f]{64}$/);
    assert.equal(identity(), before);
    assert.notEqual(before, compilerIdentity(), "another tree, another identity");
    const touch = (rel: string) =>
      Deno.utime(join(root, rel), new Date(), new Date(Date.now() + 5000));
    await touch("engine/run/advance.ts");
    assert.equal(identity(), before, "a use case the compiler does not run");
    for (const rel of tree.slice(0, 4)) {
      const was = identity();
      await touch(rel);
      assert.notEqual(identity(), was, rel);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
