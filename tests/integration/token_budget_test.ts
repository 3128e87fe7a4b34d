/**
 * Tokens through a real MCP server reading a host transcript on disk: past the config's token
 * budget every acknowledgement's and rehydrate's answer carries a warning and nothing is refused;
 * a corrupt transcript line and a transcript that does not exist are notices, and the run goes on.
 * @module
 */
import assert from "node:assert/strict";
import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { ack, footprintPlace, type Json, modelCall, SESSION } from "../helpers/footprint.ts";
import { connect, ok } from "../helpers/server.ts";

const codes = (answer: Json) => (answer.warnings ?? []).map((w: Json) => w.code);

Deno.test({
  name: "past the token budget every answer warns and none is refused; a corrupt line is a notice",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const place = await footprintPlace();
    try {
      await Deno.writeTextFile(
        join(place.home, "config.json"),
        JSON.stringify({ cost: { tokenBudget: 1500 } }),
      );
      const folder = join(place.config, "projects", "-x");
      await mkdir(folder, { recursive: true });
      const transcript = join(folder, `${SESSION}.jsonl`);
      await Deno.writeTextFile(transcript, "");
      const client = await connect(place.home, {
        cwd: place.repo,
        env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: place.config },
      });
      try {
        const started = ok(
          await client.call("start_workflow", { workflowId: "project.footprint" }),
        );
        await modelCall(transcript, 1, 1000);
        const first = await ack(client, started, "Within the budget.");
        assert.deepEqual(codes(first), [], "1,107 tokens: within 1,500");

        await appendFile(transcript, '{"type":"assistant","message": SECRET broken\n');
        await modelCall(transcript, 2, 2000);
        const second = await ack(client, first, "Past it.");
        assert.equal(second.kind, "ok", "a budget never refuses");
        assert.deepEqual(codes(second), ["USAGE_PARTIAL", "TOKEN_BUDGET_EXCEEDED"]);
        const partial = second.warnings.find((w: Json) => w.code === "USAGE_PARTIAL");
        assert.match(partial.message, /^1 line\(s\) of Claude Code's transcript could not be read/);
        assert.ok(!JSON.stringify(second).includes("SECRET"), "no transcript text in an answer");
        const over = second.warnings.find((w: Json) => w.code === "TOKEN_BUDGET_EXCEEDED");
        assert.match(over.message, /used 3214 tokens, past its budget of 1500/);

        const rehydrated = ok(
          await client.call("continue_workflow", { stateToken: second.stateToken }),
        );
        assert.ok(codes(rehydrated).includes("TOKEN_BUDGET_EXCEEDED"), "a rehydrate warns too");
        const replayed = await ack(client, first, "Past it.");
        assert.deepEqual(replayed, second, "a replay returns the recorded answer");

        const third = await ack(client, second, "Done.");
        assert.deepEqual(codes(third), ["TOKEN_BUDGET_EXCEEDED"], "the corrupt line is said once");
        assert.equal(third.isComplete, true);
      } finally {
        await client.close();
      }
    } finally {
      await place.cleanup();
    }
  },
});

Deno.test({
  name: "a transcript that does not exist: each step says so, records no tokens, and goes on",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const place = await footprintPlace();
    try {
      const client = await connect(place.home, {
        cwd: place.repo,
        env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: place.config },
      });
      try {
        const started = ok(
          await client.call("start_workflow", { workflowId: "project.footprint" }),
        );
        const first = await ack(client, started, "No transcript.");
        assert.equal(first.kind, "ok");
        assert.deepEqual(codes(first), ["USAGE_UNAVAILABLE"]);
        assert.match(first.warnings[0].message, /transcript of session .* is not under/);
        const rehydrated = ok(
          await client.call("continue_workflow", { stateToken: first.stateToken }),
        );
        assert.deepEqual(codes(rehydrated), [], "no budget set: a rehydrate reads nothing");
      } finally {
        await client.close();
      }
    } finally {
      await place.cleanup();
    }
  },
});

Deno.test({
  name: "a workflow's token budget warns too, and the smaller of it and the user's applies",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const place = await footprintPlace();
    try {
      await Deno.writeTextFile(
        join(place.repo, ".waymark", "workflows", "budgeted.json"),
        JSON.stringify({
          id: "project.budgeted",
          name: "Budgeted",
          description: "A workflow with a token budget of its own.",
          version: "1.0.0",
          tokenBudget: 1000,
          steps: [
            { id: "one", title: "One", prompt: "Do one." },
            { id: "two", title: "Two", prompt: "Do two." },
          ],
        }),
      );
      await Deno.writeTextFile(
        join(place.home, "config.json"),
        JSON.stringify({ cost: { tokenBudget: 5000 } }),
      );
      const folder = join(place.config, "projects", "-x");
      await mkdir(folder, { recursive: true });
      const transcript = join(folder, `${SESSION}.jsonl`);
      await Deno.writeTextFile(transcript, "");
      const client = await connect(place.home, {
        cwd: place.repo,
        env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: place.config },
      });
      try {
        const started = ok(await client.call("start_workflow", { workflowId: "project.budgeted" }));
        await modelCall(transcript, 1, 1000);
        const first = await ack(client, started, "Over the workflow's budget.");
        assert.equal(first.kind, "ok");
        const over = first.warnings.find((w: Json) => w.code === "TOKEN_BUDGET_EXCEEDED");
        assert.match(over?.message ?? "", /used 1107 tokens, past its budget of 1000/);
      } finally {
        await client.close();
      }
    } finally {
      await place.cleanup();
    }
  },
});
