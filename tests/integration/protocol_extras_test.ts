/**
 * The rest of MCP over a real stdio client: progress notifications on advance (step nodes
 * only), each workflow as a prompt that starts it, each session as a resource with
 * `notifications/resources/updated` after appends, and a logging notification when a session
 * fails its integrity check.
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { connectRich, err, ok, type RichClient, tempHome } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

async function withClient(fn: (c: RichClient, dbFile: string) => Promise<void>): Promise<void> {
  const home = await tempHome();
  const client = await connectRich(home.home);
  try {
    await fn(client, home.dbFile);
  } finally {
    await client.close();
    await home.cleanup();
  }
}

Deno.test("advancing with a progress token sends progress counting step nodes only", async () => {
  await withClient(async (client) => {
    const started = ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const first = ok(
      await client.callWithProgress("continue_workflow", {
        stateToken: started.stateToken,
        ackToken: started.ackToken,
        output: { notesMarkdown: "step one done" },
      }, (p) => seen.push(p)),
    );
    // a checkpoint is a node but not a step: progress does not move
    const cp = ok(
      await client.call("checkpoint_workflow", {
        stateToken: first.stateToken,
        checkpointToken: first.checkpointToken,
        output: { notesMarkdown: "side work" },
      }),
    );
    ok(
      await client.callWithProgress("continue_workflow", {
        stateToken: cp.stateToken,
        ackToken: cp.ackToken,
        output: { notesMarkdown: "step two done" },
      }, (p) => seen.push(p)),
    );
    // no token, no notification
    const rehydrate = ok(await client.call("continue_workflow", { stateToken: cp.stateToken }));
    assert.ok(rehydrate.pending);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(seen.length, 2);
    assert.deepEqual(seen.map((p) => p.progress), [1, 2]);
    assert.equal(seen[0]!.total, seen[1]!.total);
    assert.ok((seen[0]!.total ?? 0) >= 3);
    assert.match(seen[0]!.message ?? "", /^Completed step 1 of \d+: /);
  });
});

Deno.test("each workflow is a prompt that starts it and returns its first step", async () => {
  await withClient(async (client, dbFile) => {
    const { prompts } = await client.client.listPrompts();
    const names = prompts.map((p) => p.name);
    assert.ok(names.includes("waymark.bug_investigation"));
    const prompt = prompts.find((p) => p.name === "waymark.code_review")!;
    assert.deepEqual(prompt.arguments?.map((a) => a.name), ["goal", "context"]);
    const got = await client.client.getPrompt({
      name: "waymark.code_review",
      arguments: { goal: "Review the gecko PR", context: '{"ticket":"GK-7"}' },
    });
    const text = (got.messages[0]!.content as { text: string }).text;
    assert.match(text, /^Run the waymark workflow waymark\.code_review/);
    assert.match(text, /Then continue_workflow with stateToken, ackToken, output\.notesMarkdown:/);
    const run = (got._meta as Json)["waymark/run"];
    assert.match(run.stateToken, /^st1_/);
    // the prompt really started a run: its tokens advance it
    const next = ok(
      await client.call("continue_workflow", {
        stateToken: run.stateToken,
        ackToken: run.ackToken,
      }),
    );
    assert.equal(placeOf(next).runId, run.runId);
    const db = createClient({ url: `file:${dbFile}` });
    try {
      const row = (await db.execute("SELECT title FROM sessions")).rows[0]!;
      assert.equal(row.title, "Review the gecko PR");
    } finally {
      db.close();
    }
    await assert.rejects(
      client.client.getPrompt({ name: "waymark.code_review", arguments: { context: "[1]" } }),
      /context/,
    );
    await assert.rejects(client.client.getPrompt({ name: "no.such" }), /No workflow/);
  });
});

Deno.test("sessions are resources; subscribers get resources/updated after each append", async () => {
  await withClient(async (client) => {
    const started = ok(
      await client.call("start_workflow", {
        workflowId: "waymark.code_review",
        goal: "Resource run",
      }),
    );
    const uri = `waymark://sessions/${started.session.sessionId}`;
    const { resources } = await client.client.listResources();
    assert.deepEqual(resources.map((r) => r.uri), [uri]);
    assert.equal(resources[0]!.title, "Resource run");
    const { resourceTemplates } = await client.client.listResourceTemplates();
    assert.equal(resourceTemplates[0]!.uriTemplate, "waymark://sessions/{sessionId}");
    await client.client.subscribeResource({ uri });
    const advanced = ok(
      await client.call("continue_workflow", {
        stateToken: started.stateToken,
        ackToken: started.ackToken,
        output: { notesMarkdown: "The resource shows these notes." },
      }),
    );
    ok(
      await client.call("checkpoint_workflow", {
        stateToken: advanced.stateToken,
        checkpointToken: advanced.checkpointToken,
        output: { notesMarkdown: "checkpointed" },
      }),
    );
    // a replay and a rehydrate append nothing and notify nothing
    ok(
      await client.call("continue_workflow", {
        stateToken: started.stateToken,
        ackToken: started.ackToken,
        output: { notesMarkdown: "The resource shows these notes." },
      }),
    );
    ok(await client.call("continue_workflow", { stateToken: advanced.stateToken }));
    await new Promise((r) => setTimeout(r, 100));
    const updates = client.notifications.filter((n) =>
      n.method === "notifications/resources/updated"
    );
    assert.deepEqual(updates.map((n) => n.params?.uri), [uri, uri]);
    const read = await client.client.readResource({ uri });
    const body = JSON.parse((read.contents[0] as { text: string }).text);
    assert.equal(body.sessionId, started.session.sessionId);
    assert.equal(body.runs[0].runId, placeOf(started).runId);
    assert.equal(body.runs[0].latestNotes, "checkpointed");
    await client.client.unsubscribeResource({ uri });
    ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
    await assert.rejects(
      client.client.readResource({ uri: "waymark://sessions/ses_0000000000000000" }),
      /No waymark session/,
    );
    const completion = await client.client.complete({
      ref: { type: "ref/resource", uri: "waymark://sessions/{sessionId}" },
      argument: { name: "sessionId", value: started.session.sessionId.slice(0, 8) },
    });
    assert.deepEqual(completion.completion.values, [started.session.sessionId]);
  });
});

Deno.test("a session that fails its integrity check is refused and logged as a health warning", async () => {
  await withClient(async (client, dbFile) => {
    const started = ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
    const args = {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      output: { notesMarkdown: "x" },
    };
    ok(await client.call("continue_workflow", args));
    const db = createClient({ url: `file:${dbFile}` });
    try {
      await db.execute("UPDATE attempts SET response = response || ' '");
    } finally {
      db.close();
    }
    const refused = err(await client.call("continue_workflow", args));
    assert.equal(refused.code, "STORAGE_CORRUPTION_DETECTED");
    await new Promise((r) => setTimeout(r, 100));
    const logged = client.notifications.filter((n) => n.method === "notifications/message");
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.params?.level, "error");
    assert.equal(logged[0]!.params?.logger, "waymark.health");
    assert.equal((logged[0]!.params?.data as Json).code, "STORAGE_CORRUPTION_DETECTED");
    // read-only tools still work on it
    const found = ok(await client.call("resume_session", {}));
    assert.equal(found.candidates[0].corrupt, true);
  });
});
