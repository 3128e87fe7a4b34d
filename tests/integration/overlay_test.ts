/**
 * Overlays over a bundled workflow, through the real use-cases on a real libSQL file: a project
 * overlay inserts a step after `map-changes`, appends to a prompt and removes a step; it starts
 * and runs with the inserted step, pins its own hash (not the base's), and is listed with its
 * layers; written against another base hash, it says the base changed. A missing step, a cycle,
 * a malformed file and a missing base are load errors with `file:line`, listed, and every other
 * workflow still loads.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openWaymark } from "../../mod.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { tempHome } from "../helpers/server.ts";
import { advance, inProcess } from "../helpers/viewer_fixture.ts";

const OVERLAY = {
  id: "team.review_plus",
  name: "Code review with a licence check",
  overlay: {
    base: "waymark.code_review",
    changes: [
      {
        insertAfter: "map-changes",
        steps: [{
          id: "licence-check",
          title: "Check licences",
          prompt: "List every new dependency and its licence.",
        }],
      },
      { appendPrompt: "review-tests", text: "Our CI runs `make test-all`: say whether it passed." },
      { remove: "review-api-naming" },
    ],
  },
};

async function write(dir: string, name: string, value: unknown): Promise<void> {
  await Deno.writeTextFile(
    join(dir, name),
    typeof value === "string" ? value : JSON.stringify(value, null, 2),
  );
}

Deno.test("an overlay over a bundled workflow starts, runs its inserted step and pins its own hash", async () => {
  const { home, dbUrl, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "waymark-overlay-" });
  const dir = join(workspace, ".waymark", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await write(dir, "review_plus.overlay.jsonc", `// ours\n${JSON.stringify(OVERLAY, null, 2)}`);
  const waymark = await openWaymark({ home, dbUrl, workspace });
  try {
    const listed = await waymark.list();
    assert.ok(listed.ok);
    assert.deepEqual(listed.value.loadErrors, []);
    const mine = listed.value.workflows.find((w) => w.id === "team.review_plus")!;
    const base = listed.value.workflows.find((w) => w.id === "waymark.code_review")!;
    assert.equal(mine.source, "project");
    assert.deepEqual(mine.overlay, { layers: ["waymark.code_review", "team.review_plus"] });
    assert.notEqual(mine.workflowHash, base.workflowHash);
    assert.equal(mine.stepCount, base.stepCount);

    const driver = inProcess(waymark);
    const s0 = await driver.start({
      workflowId: "team.review_plus",
      goal: "Review the licence change",
    });
    const s1 = await advance(driver, s0, "Intent: add a dependency.");
    const s2 = await advance(driver, s1, "Mapped 2 files.");
    const pending = (s2 as unknown as { pending: { stepId: string } }).pending;
    assert.equal(pending.stepId, "licence-check");
    const run = await waymark.store.getRun(s0.session!.runId.replace(/^run_/, ""));
    assert.equal(run!.workflowHash, mine.workflowHash);
    const s3 = await advance(driver, s2, "No new licences.");
    const s4 = await advance(driver, s3, "Correct.");
    const tests = (s4 as unknown as { pending: { stepId: string; prompt: string } }).pending;
    assert.equal(tests.stepId, "review-tests");
    assert.match(tests.prompt, /Our CI runs `make test-all`: say whether it passed\.$/);

    // written against another base hash: listed as changed, the run's pin unaffected
    await write(dir, "review_plus.overlay.jsonc", {
      ...OVERLAY,
      overlay: { ...OVERLAY.overlay, baseHash: `sha256:${"1".repeat(64)}` },
    });
    const again = await waymark.list();
    assert.ok(again.ok);
    const changed = again.value.workflows.find((w) => w.id === "team.review_plus")!;
    assert.equal(changed.overlay?.baseChangedFrom, `sha256:${"1".repeat(64)}`);
    const found = await waymark.inspect("team.review_plus");
    assert.ok(found.ok);
    assert.equal(found.value.workflow.workflowHash, mine.workflowHash);
  } finally {
    await waymark.close();
    await cleanup();
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("broken overlays are load errors with file:line; nothing else in the library is affected", async () => {
  const { home, dbUrl, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "waymark-overlay-bad-" });
  const dir = join(workspace, ".waymark", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await write(dir, "good.overlay.json", OVERLAY);
  await write(dir, "missing_step.overlay.json", {
    id: "team.missing_step",
    overlay: { base: "waymark.code_review", changes: [{ remove: "no-such-step" }] },
  });
  await write(dir, "cycle_a.overlay.json", {
    id: "team.cycle_a",
    overlay: { base: "team.cycle_b", changes: [{ remove: "x" }] },
  });
  await write(dir, "cycle_b.overlay.json", {
    id: "team.cycle_b",
    overlay: { base: "team.cycle_a", changes: [{ remove: "x" }] },
  });
  await write(dir, "malformed.overlay.json", {
    id: "team.malformed",
    overlay: { base: "waymark.code_review", changes: [{ insertAfter: "map-changes" }] },
  });
  await write(dir, "no_base.overlay.json", {
    id: "team.no_base",
    overlay: { base: "team.nowhere", changes: [{ remove: "x" }] },
  });
  const waymark = await openWaymark({ home, dbUrl, workspace });
  try {
    const listed = await waymark.list();
    assert.ok(listed.ok);
    const errors = new Map(listed.value.loadErrors.map((e) => [e.file, e.issues]));
    const at = (name: string) => [...errors.keys()].find((f) => f.includes(`/${name}:`));
    assert.match(at("missing_step.overlay.json")!, /:6$/); // the change's line
    assert.match(
      JSON.stringify(errors.get(at("missing_step.overlay.json")!)),
      /no step `no-such-step` in the base/,
    );
    assert.match(JSON.stringify(errors.get(at("cycle_a.overlay.json")!)), /cycle/);
    assert.match(JSON.stringify(errors.get(at("cycle_b.overlay.json")!)), /cycle/);
    assert.ok(at("malformed.overlay.json"));
    assert.match(
      JSON.stringify(errors.get(at("no_base.overlay.json")!)),
      /no workflow `team\.nowhere`/,
    );
    assert.equal(errors.size, 5);
    const ids = listed.value.workflows.map((w) => w.id);
    assert.ok(ids.includes("team.review_plus"));
    assert.equal(ids.length, BUNDLED_WORKFLOWS.length + 1);
    const started = await waymark.start({ workflowId: "team.missing_step" } as never);
    assert.equal(started.ok, false);
  } finally {
    await waymark.close();
    await cleanup();
    await Deno.remove(workspace, { recursive: true });
  }
});
