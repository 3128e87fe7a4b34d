/**
 * Pinning and configuration: a run keeps its compiled snapshot when the file changes or
 * vanishes (and says so), and `$WAYMARK_HOME/config.json` adds workflow folders and defaults.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openWaymark, type Result, type StepResponse } from "../../mod.ts";
import { tempHome } from "../helpers/server.ts";

function value(result: Result<StepResponse>): StepResponse {
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

const workflow = (prompt: string, extraStep = false) =>
  JSON.stringify({
    id: "project.pinned",
    name: "Pinned",
    description: "A workflow that changes under a running run.",
    version: "1.0.0",
    steps: [
      { id: "one", title: "One", prompt: "First." },
      { id: "two", title: "Two", prompt },
      ...(extraStep ? [{ id: "three", title: "Three", prompt: "Added later." }] : []),
    ],
  });

Deno.test("a run keeps its pinned workflow when the file changes or disappears, with a warning", async () => {
  const { home, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir();
  const file = join(workspace, ".waymark", "workflows", "pinned.json");
  await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(file, workflow("Second, as first written."));
  const waymark = await openWaymark({ home, workspace });
  try {
    const start = value(await waymark.start({ workflowId: "project.pinned" }));
    assert.equal(start.warnings, undefined, "none: left out");

    await Deno.writeTextFile(file, workflow("Second, rewritten.", true));
    const second = value(
      await waymark.continue({
        stateToken: start.stateToken,
        ackToken: start.ackToken,
        output: { notesMarkdown: "First done." },
      }),
    );
    assert.equal(second.pending?.prompt, "Second, as first written.");
    assert.deepEqual(second.warnings!.map((w) => w.code), ["WORKFLOW_CHANGED_ON_DISK"]);
    const rehydrated2 = value(await waymark.continue({ stateToken: second.stateToken }));
    assert.equal(rehydrated2.workflow!.hash, start.workflow!.hash);

    const fresh = value(await waymark.start({ workflowId: "project.pinned" }));
    assert.notEqual(fresh.workflow!.hash, start.workflow!.hash, "a new run pins the new version");

    await Deno.remove(file);
    const rehydrated = value(await waymark.continue({ stateToken: second.stateToken }));
    assert.deepEqual(rehydrated.warnings!.map((w) => w.code), ["WORKFLOW_FILE_GONE"]);
    const done = value(
      await waymark.continue({
        stateToken: second.stateToken,
        ackToken: second.ackToken,
        output: { notesMarkdown: "Second done." },
      }),
    );
    assert.equal(done.isComplete, true, "the pinned two-step workflow completes without the file");
    assert.deepEqual(done.warnings!.map((w) => w.code), ["WORKFLOW_FILE_GONE"]);
  } finally {
    await waymark.close();
    await cleanup();
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("config.json adds workflow folders and default preferences; a broken one is refused", async () => {
  const { home, cleanup } = await tempHome();
  try {
    await Deno.mkdir(join(home, "team-flows"));
    await Deno.writeTextFile(
      join(home, "team-flows", "flow.json"),
      workflow("Team step.").replace("project.pinned", "team.flow"),
    );
    await Deno.writeTextFile(
      join(home, "config.json"),
      `{ // JSONC is fine
        "workflowDirs": ["team-flows"],
        "preferences": { "riskPolicy": "balanced" },
      }`,
    );
    const waymark = await openWaymark({ home, dbUrl: ":memory:" });
    try {
      const listed = await waymark.list();
      assert.ok(listed.ok);
      const team = listed.ok && listed.value.workflows.find((w) => w.id === "team.flow");
      assert.ok(team, "the configured folder is a workflow source");
      assert.equal(team && team.source, "extra");
      const started = value(await waymark.start({ workflowId: "team.flow" }));
      assert.deepEqual(started.preferences, { autonomy: "guided", riskPolicy: "balanced" });
      const chosen = value(
        await waymark.start({ workflowId: "team.flow", preferences: { riskPolicy: "aggressive" } }),
      );
      assert.equal(
        chosen.preferences!.riskPolicy,
        "aggressive",
        "the caller's choice wins over the default",
      );
    } finally {
      await waymark.close();
    }
    await Deno.writeTextFile(join(home, "config.json"), `{ "workflowDir": "oops" }`);
    await assert.rejects(
      () => openWaymark({ home, dbUrl: ":memory:" }),
      /config\.json.*workflowDir/,
    );
  } finally {
    await cleanup();
  }
});
