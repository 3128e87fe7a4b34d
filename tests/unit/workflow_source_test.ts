/**
 * The workflow source on real folders: finding one workflow (compiled on demand) picks what the
 * full listing picks, and listing by summaries lists it, across precedence, load errors, routines
 * in other folders and edits.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createWorkflowSource, type SourceDir } from "../../store/mod.ts";
import type { WorkflowSource } from "../../engine/model/ports.ts";
import { summarize } from "../../engine/use_cases/list_workflows.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

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

async function folders(): Promise<{ dirs: SourceDir[]; root: string }> {
  const root = await Deno.makeTempDir({ prefix: "waymark-source-" });
  const dirs: SourceDir[] = [
    { source: "user", dir: join(root, "user") },
    { source: "project", dir: join(root, "project") },
  ];
  for (const d of dirs) await Deno.mkdir(d.dir);
  return { dirs, root };
}

/** Every id `load` lists (and one it does not) resolves the same way through `find`. */
async function assertFindAgreesWithLoad(make: () => WorkflowSource): Promise<void> {
  const set = await make().load();
  for (const listed of set.workflows) {
    const found = await make().find!(listed.id); // a fresh source: find alone, no listing first
    assert.equal(found?.file, listed.file, listed.id);
    assert.equal(found?.hash, listed.hash, listed.id);
  }
  assert.equal(await make().find!("team.nowhere"), null);
  // listing by summaries (what list_workflows reads) lists what load lists
  assert.deepEqual(await make().summaries!(), {
    workflows: set.workflows.map(summarize),
    errors: set.errors,
  });
}

Deno.test("find compiles on demand and agrees with load on precedence, errors and routines", async () => {
  const { dirs, root } = await folders();
  const [user, project] = dirs.map((d) => d.dir) as [string, string];
  try {
    await Deno.writeTextFile(join(user, "dup.json"), file("team.dup"));
    await Deno.writeTextFile(join(project, "dup.json"), file("team.dup"));
    // the user copy of team.broken does not compile (unknown template): the project one wins
    await Deno.writeTextFile(
      join(user, "broken.json"),
      file("team.broken", {
        steps: [{ id: "c", title: "C", templateCall: { templateId: "team.templates.routine.x" } }],
      }),
    );
    await Deno.writeTextFile(join(project, "broken.json"), file("team.broken"));
    await Deno.writeTextFile(join(project, "check.json"), file("team.routine-check"));
    await Deno.writeTextFile(
      join(user, "caller.jsonc"),
      `// comments are fine\n${caller("team.caller")}`,
    );
    await Deno.writeTextFile(join(user, "reserved.json"), file("waymark.mine"));
    await Deno.writeTextFile(join(user, "syntax.json"), "{ not json");
    const make = () => createWorkflowSource(BUNDLED_WORKFLOWS, dirs);

    const set = await make().load();
    assert.equal(set.workflows.find((w) => w.id === "team.dup")?.source, "user");
    assert.equal(set.workflows.find((w) => w.id === "team.broken")?.source, "project");
    assert.deepEqual(
      set.errors.map((e) => e.file.slice(root.length)).sort(),
      ["/project/dup.json", "/user/broken.json", "/user/reserved.json", "/user/syntax.json"],
    );
    await assertFindAgreesWithLoad(make);
    assert.equal(await make().find!("waymark.mine"), null, "waymark.* only from bundled files");
    assert.equal((await make().find!("waymark.code_review"))?.source, "bundled");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("find sees edits: a changed file, and a changed routine, change the hash", async () => {
  const { dirs, root } = await folders();
  const [user, project] = dirs.map((d) => d.dir) as [string, string];
  try {
    await Deno.writeTextFile(join(project, "check.json"), file("team.routine-check"));
    await Deno.writeTextFile(join(user, "caller.json"), caller("team.caller"));
    await Deno.writeTextFile(join(user, "plain.json"), file("team.plain"));
    const source = createWorkflowSource(BUNDLED_WORKFLOWS, dirs);
    const caller1 = await source.find!("team.caller");
    const plain1 = await source.find!("team.plain");
    assert.ok(caller1 && plain1);
    assert.equal((await source.find!("team.caller"))?.hash, caller1.hash, "cached");

    await Deno.writeTextFile(
      join(project, "check.json"),
      file("team.routine-check", { steps: steps("changed routine") }),
    );
    const caller2 = await source.find!("team.caller");
    assert.notEqual(caller2?.hash, caller1.hash, "the routine is inside the caller's hash");
    assert.equal((await source.find!("team.plain"))?.hash, plain1.hash);

    await Deno.writeTextFile(join(user, "plain.json"), file("team.plain", { version: "2" }));
    assert.notEqual((await source.find!("team.plain"))?.hash, plain1.hash);
    assert.equal(
      (await source.load()).workflows.find((w) => w.id === "team.plain")?.hash,
      (await source.find!("team.plain"))?.hash,
    );

    await Deno.remove(join(user, "plain.json"));
    assert.equal(await source.find!("team.plain"), null);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
