/**
 * Moving a session with the command line between homes, over real MCP clients on both sides:
 * `sessions list/show/export` on the first, `import` on the second, then `resume_session` finds
 * it, fresh tokens advance it and a rewind forks it; the first machine's tokens are foreign
 * there. `export --all`, `import -` and a refused import (nothing written) too; each file of an
 * import gets its own verdict, and a refused import into an empty home creates nothing.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { eventOf, forged, nested } from "../helpers/bundles.ts";
import { dumpAll, runCli } from "../helpers/maintenance.ts";
import { connect, err, ok, tempHome } from "../helpers/server.ts";
import { overMcp, seedForkedReview } from "../helpers/viewer_fixture.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

function json(text: string): Json {
  return JSON.parse(text) as Json;
}

Deno.test({
  name: "export → import into a fresh home → resume → advance → fork, over real MCP clients",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const a = await tempHome();
    const b = await tempHome();
    const file = join(a.home, "review.json");
    try {
      const clientA = await connect(a.home);
      const review = await seedForkedReview(overMcp(clientA));
      await clientA.close();
      const sid = `ses_${review.sessionId}`;

      const listed = await runCli(["sessions", "list", "--json"], { home: a.home });
      assert.equal(listed.code, 0, listed.err);
      assert.deepEqual(json(listed.out).sessions.map((s: Json) => s.sessionId), [sid]);
      const shown = await runCli(["sessions", "show", sid, "--json"], { home: a.home });
      assert.equal(json(shown.out).runs[0].branchCount, 2);
      const shownText = await runCli(["sessions", "show", sid], { home: a.home });
      assert.match(shownText.out, /Review PR #42[\s\S]*pending step: /);

      const out = await runCli(["sessions", "export", sid, "-o", file], { home: a.home });
      assert.equal(out.code, 0, out.err);
      assert.match(
        out.err,
        new RegExp(`exported ${sid} to .*review\\.json: \\d+ events, 1 snapshot`),
      );
      const stdout = await runCli(["sessions", "export", sid], { home: a.home });
      assert.equal(stdout.out, await Deno.readTextFile(file), "stdout and -o differ");

      const imported = await runCli(["import", file], { home: b.home });
      assert.equal(imported.code, 0, imported.err);
      assert.match(imported.out, new RegExp(`imported ${sid}: \\d+ events`));

      const clientB = await connect(b.home, { client: "v1" });
      try {
        const found = ok(await clientB.call("resume_session", { query: "retry logic uploader" }));
        const candidate = found.candidates[0];
        assert.equal(candidate.sessionId, sid);
        assert.equal(candidate.tip.nodeId, placeOf(review.newTip).nodeId);
        const foreign = err(
          await clientB.call("continue_workflow", { stateToken: review.newTip.stateToken }),
        );
        assert.equal(foreign.code, "TOKEN_INVALID");
        assert.equal(foreign.details?.reason, "unknown_key");

        const here = ok(
          await clientB.call("continue_workflow", { stateToken: candidate.tip.stateToken }),
        );
        assert.match(JSON.stringify(here.recap), /4xx now stops the retries/);
        const advanced = ok(
          await clientB.call("continue_workflow", {
            stateToken: here.stateToken,
            ackToken: here.ackToken,
            output: { notesMarkdown: "Continued on the second machine." },
          }),
        );
        assert.equal(advanced.kind, "ok");
        assert.equal(here.session.sessionId, sid);
        const rewound = ok(
          await clientB.call("continue_workflow", { stateToken: here.stateToken }),
        );
        assert.ok(rewound.forked, "the rewind does not see the branch just made");
        const fork = ok(
          await clientB.call("continue_workflow", {
            stateToken: rewound.stateToken,
            ackToken: rewound.ackToken,
            output: { notesMarkdown: "A second try on the second machine." },
          }),
        );
        assert.notEqual(placeOf(fork).nodeId, placeOf(advanced).nodeId);
      } finally {
        await clientB.close();
      }
      const after = json((await runCli(["sessions", "show", sid, "--json"], { home: b.home })).out);
      assert.equal(after.runs[0].branchCount, 3, "the fork made here is not a third branch");

      // back on the first machine: the same id is taken, so it imports as a new session
      const back = await runCli(["import", "-"], {
        home: a.home,
        stdin: await Deno.readTextFile(file),
      });
      assert.equal(back.code, 0, back.err);
      assert.match(back.out, new RegExp(`imported ses_[0-9a-f]{16} \\(${sid} already exists here`));
      const twice = await runCli(["import", file], { home: a.home });
      assert.match(twice.out, /already imported as ses_[0-9a-f]{16} .*nothing written/);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  },
});

Deno.test("export --all writes one bundle per session; a refused import writes nothing and exits 1", async () => {
  const a = await tempHome();
  const b = await tempHome();
  try {
    const client = await connect(a.home);
    await seedForkedReview(overMcp(client));
    ok(
      await client.call("start_workflow", {
        workflowId: "waymark.bug_investigation",
        goal: "Flaky",
      }),
    );
    await client.close();
    const dir = join(a.home, "out");
    const all = await runCli(["sessions", "export", "--all", "-o", dir], { home: a.home });
    assert.equal(all.code, 0, all.err);
    const files = all.out.trim().split("\n").sort();
    assert.equal(files.length, 2);
    const none = await runCli([
      "sessions",
      "export",
      "--all",
      "-o",
      join(a.home, "none"),
      "--older-than",
      "1d",
    ], {
      home: a.home,
    });
    assert.equal(none.out, "", "a fresh session is older than a day");

    const good = await Deno.readTextFile(files[0]!);
    const bad = join(a.home, "bad.json");
    await Deno.writeTextFile(bad, good.replace(/"title":"/, '"title":"x'));
    await runCli(["sessions", "list"], { home: b.home });
    const before = await dumpAll(b.dbUrl);
    const refused = await runCli(["import", bad], { home: b.home });
    assert.equal(refused.code, 1);
    assert.match(
      refused.err,
      /bad\.json: refused: The bundle was refused: its session part does not match/,
    );
    assert.deepEqual(await dumpAll(b.dbUrl), before);
    const both = await runCli(["import", ...files, "--json"], { home: b.home });
    assert.equal(both.code, 0, both.err);
    assert.deepEqual(json(both.out).imports.map((i: Json) => i.value.status), [
      "imported",
      "imported",
    ]);
    const listed = await runCli(["sessions", "list", "--status", "running"], { home: b.home });
    assert.equal(listed.out.trim().split("\n").length, 2);
    const badStatus = await runCli(["sessions", "list", "--status", "paused"], { home: b.home });
    assert.equal(badStatus.code, 2);
    assert.match(badStatus.err, /--status must be one of running, complete, aborted, corrupt/);
  } finally {
    await a.cleanup();
    await b.cleanup();
  }
});

Deno.test("each bundle gets its own verdict: a 5,000-deep context is refused with the limit, the next file still imports", async () => {
  const a = await tempHome();
  const b = await tempHome();
  try {
    const client = await connect(a.home);
    const review = await seedForkedReview(overMcp(client));
    await client.close();
    const good = join(a.home, "good.json");
    const out = await runCli(["sessions", "export", `ses_${review.sessionId}`, "-o", good], {
      home: a.home,
    });
    assert.equal(out.code, 0, out.err);
    const bad = join(a.home, "bad.json");
    // written as text: canonicalising it to seal the bundle would overflow the forger's stack too
    const shallow = forged(await Deno.readTextFile(good), (bundle) => {
      eventOf(bundle, "node_created").payload.context = { deep: "DEEP" };
    });
    await Deno.writeTextFile(bad, shallow.replace('"DEEP"', JSON.stringify(nested(5000))));
    const both = await runCli(["import", bad, good, "--json"], { home: b.home });
    assert.equal(both.code, 1, both.err);
    assert.doesNotMatch(both.err, /fatal|Maximum call stack/);
    const [refused, imported] = json(both.out).imports;
    assert.equal(refused.ok, false);
    assert.equal(refused.error.code, "BUNDLE_INVALID");
    assert.match(refused.error.message, /context nested more than 64 levels deep \(the limit\)/);
    assert.equal(imported.ok, true, JSON.stringify(imported));
    assert.equal(imported.value.sessionId, `ses_${review.sessionId}`);
  } finally {
    await a.cleanup();
    await b.cleanup();
  }
});

Deno.test("a refused import into an empty home creates neither the database nor the keyring", async () => {
  const a = await tempHome();
  try {
    const bad = join(a.home, "bad.json");
    await Deno.writeTextFile(bad, '{"format":"waymark.session","bundleSchemaVersion":1}');
    const home = join(a.home, "empty");
    await Deno.mkdir(home);
    const refused = await runCli(["import", bad], { home });
    assert.equal(refused.code, 1, refused.err);
    assert.match(refused.err, /bad\.json: refused: The bundle is not a well-formed/);
    assert.deepEqual([...Deno.readDirSync(home)].map((e) => e.name), []);
  } finally {
    await a.cleanup();
  }
});
