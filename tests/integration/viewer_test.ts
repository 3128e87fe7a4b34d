/**
 * The viewer in-process (`app.request`) over sessions written through the real use-cases: the
 * guards (Host and Origin allowlists, read-only methods, CSP), the pages, the JSON API, the
 * Markdown export, escaping of everything an agent wrote, and the live-update stream.
 */
import assert from "node:assert/strict";
import { exportSession, openWaymark, startWorkflow, type Waymark } from "../../mod.ts";
import { createViewerApp, CSP } from "../../web/mod.ts";
import { tempHome } from "../helpers/server.ts";
import {
  advance,
  type ForkedReview,
  inProcess,
  seedForkedReview,
  seedHostile,
} from "../helpers/viewer_fixture.ts";
import { placeOf } from "../helpers/answers.ts";

const HOST = "127.0.0.1:4321";

async function setup(): Promise<{
  waymark: Waymark;
  review: ForkedReview;
  hostile: { sessionId: string; runId: string; nodeId: string };
  get(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}> {
  const { home, cleanup } = await tempHome();
  const waymark = await openWaymark({ home });
  const driver = inProcess(waymark);
  const review = await seedForkedReview(driver);
  const hostile = await seedHostile(driver);
  const viewer = createViewerApp({
    db: waymark.store.db,
    allowedHosts: () => [HOST, "localhost:4321", "[::1]:4321"],
    pollMs: 50,
  });
  return {
    waymark,
    review,
    hostile,
    get: (path, init = {}) =>
      Promise.resolve(
        viewer.app.request(path, {
          ...init,
          headers: { host: HOST, ...(init.headers as Record<string, string> ?? {}) },
        }),
      ),
    close: async () => {
      viewer.close();
      await waymark.close();
      await cleanup();
    },
  };
}

Deno.test("viewer guards: Host and Origin allowlists (403), read-only (405), strict headers", async () => {
  const t = await setup();
  try {
    for (
      const host of [
        "evil.example",
        "127.0.0.1:9999",
        "localhost",
        "attacker.127.0.0.1.nip.io:4321",
      ]
    ) {
      const res = await t.get("/", { headers: { host } });
      assert.equal(res.status, 403, host);
      await res.body?.cancel();
    }
    for (const host of ["127.0.0.1:4321", "localhost:4321", "[::1]:4321", "LOCALHOST:4321"]) {
      const res = await t.get("/", { headers: { host } });
      assert.equal(res.status, 200, host);
      await res.body?.cancel();
    }
    const foreignOrigin = await t.get("/api/sessions", {
      headers: { origin: "https://evil.example" },
    });
    assert.equal(foreignOrigin.status, 403);
    await foreignOrigin.body?.cancel();
    const nullOrigin = await t.get("/api/sessions", { headers: { origin: "null" } });
    assert.equal(nullOrigin.status, 403);
    await nullOrigin.body?.cancel();
    const ownOrigin = await t.get("/api/sessions", { headers: { origin: `http://${HOST}` } });
    assert.equal(ownOrigin.status, 200);
    await ownOrigin.body?.cancel();

    for (const method of ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      for (const path of ["/", `/sessions/ses_${t.review.sessionId}`, "/api/sessions", "/nope"]) {
        const res = await t.get(path, { method });
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.equal(res.headers.get("allow"), "GET, HEAD");
        await res.body?.cancel();
      }
    }
    const head = await t.get(`/sessions/ses_${t.review.sessionId}`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");

    const page = await t.get("/");
    assert.equal(page.headers.get("content-security-policy"), CSP);
    assert.equal(page.headers.get("x-content-type-options"), "nosniff");
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    assert.equal(page.headers.get("x-frame-options"), "DENY");
    assert.equal(page.headers.get("cache-control"), "no-store");
    await page.body?.cancel();
    const forbidden = await t.get("/", { headers: { host: "evil.example" } });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.headers.get("content-security-policy"), CSP, "refusals carry it too");
    assert.equal(forbidden.headers.get("x-content-type-options"), "nosniff");
    await forbidden.body?.cancel();
  } finally {
    await t.close();
  }
});

Deno.test("viewer pages: list with search and filters, session with both branches, deep link", async () => {
  const t = await setup();
  try {
    const list = await (await t.get("/")).text();
    assert.match(list, /Review PR #42: retry logic in the uploader/);
    assert.match(list, new RegExp(`ses_${t.review.sessionId}`));
    const searched = await (await t.get("/?q=uploader")).text();
    assert.match(searched, /retry logic/);
    assert.doesNotMatch(searched, new RegExp(`ses_${t.hostile.sessionId}`));
    const none = await (await t.get("/?q=no-such-thing-at-all")).text();
    assert.match(none, /No session matches/);
    const byWorkflow = await (await t.get("/?workflow=waymark.bug_investigation")).text();
    assert.match(byWorkflow, /No session matches/);
    const running = await (await t.get("/?status=running&age=1d")).text();
    assert.match(running, /retry logic/);
    const old = await (await t.get("/?age=older30d")).text();
    assert.match(old, /No session matches/);
    const likeWildcards = await (await t.get("/?q=%25")).text();
    assert.match(likeWildcards, /No session matches/, "% is matched literally");

    const { sessionId, runId } = t.review;
    const page = await (await t.get(`/sessions/ses_${sessionId}`)).text();
    // both branches: the old tip and the new tip are drawn, on different lanes
    for (const tip of [t.review.oldTip, t.review.newTip]) {
      assert.match(page, new RegExp(`id="n-${placeOf(tip).nodeId}"`));
    }
    assert.match(page, new RegExp(`id="n-${placeOf(t.review.newTip).nodeId}"[^>]*data-branch="0"`));
    assert.match(page, new RegExp(`id="n-${placeOf(t.review.oldTip).nodeId}"[^>]*data-branch="1"`));
    assert.match(page, /class="badge tip"/);
    assert.match(page, /kind-checkpoint/);
    assert.match(page, /Steps on this branch/);
    assert.match(page, /Timeline/);
    assert.match(page, /Checkpoint: halfway through the file map/, "session notes");
    // the pending step's prompt comes from the pinned snapshot, placeholders filled
    const deep = await (await t.get(
      `/sessions/ses_${sessionId}/runs/run_${runId}/nodes/${t.review.notedNodeId}`,
    )).text();
    assert.match(deep, new RegExp(t.review.notedText.replace(/\./g, "\\.")));
    assert.match(deep, /Pending step/);
    // a deep link to the root shows the first step's prompt with {{prUrl}} filled in
    const root = (await t.waymark.store.db.selectFrom("nodes").select("node_id")
      .where("run_id", "=", runId).where("parent_id", "is", null).executeTakeFirstOrThrow())
      .node_id;
    const rootPage =
      await (await t.get(`/sessions/ses_${sessionId}/runs/run_${runId}/nodes/${root}`))
        .text();
    assert.match(rootPage, /Understand the change&#39;s intent|Understand the change's intent/);
    assert.match(rootPage, /https:\/\/example\.com\/pr\/42/);

    for (
      const path of [
        "/sessions/ses_ffff",
        "/sessions/not-hex",
        `/sessions/ses_${sessionId}/runs/run_ffff`,
        `/sessions/ses_${sessionId}/runs/run_${runId}/nodes/ffff`,
        "/api/sessions/ses_ffff",
        "/no/such/page",
      ]
    ) {
      const res = await t.get(path);
      assert.equal(res.status, 404, path);
      await res.body?.cancel();
    }
  } finally {
    await t.close();
  }
});

Deno.test("viewer JSON API: sessions, session, run graph and node, from which the pages are built", async () => {
  const t = await setup();
  try {
    const { sessionId, runId } = t.review;
    const list = await (await t.get("/api/sessions")).json();
    assert.equal(list.sessions.length, 2);
    assert.equal(list.hasMore, false);
    const session = await (await t.get(`/api/sessions/ses_${sessionId}`)).json();
    assert.equal(session.runs.length, 1);
    assert.equal(session.runs[0].workflowId, "waymark.code_review");
    assert.equal(session.runs[0].branchCount, 2);
    const graph = await (await t.get(`/api/sessions/ses_${sessionId}/runs/run_${runId}/graph`))
      .json();
    assert.equal(graph.nodes.length, session.runs[0].nodeCount);
    assert.equal(graph.branches.length, 2);
    assert.equal(graph.preferredTipId, placeOf(t.review.newTip).nodeId);
    assert.equal(graph.edges.filter((e: { fork: boolean }) => e.fork).length, 1);
    assert.ok(graph.nodes.some((n: { kind: string }) => n.kind === "checkpoint"));
    const node = await (await t.get(
      `/api/sessions/ses_${sessionId}/runs/run_${runId}/nodes/${t.review.forkNodeId}`,
    )).json();
    assert.equal(node.children.length, 2, "the fork node has two step children");
    assert.equal(node.artifacts[0].kind, "diff_range");
    assert.equal(node.pending.stepId, "map-changes");
    assert.match(node.notesMarkdown, /exponential backoff/);
    const timeline = await (await t.get(`/api/sessions/ses_${sessionId}/timeline`)).json();
    assert.equal(timeline.lanes.length, 1);
    assert.equal(timeline.nodes.length, graph.nodes.length);
  } finally {
    await t.close();
  }
});

Deno.test("viewer escapes every byte an agent wrote: title, notes, artifacts, context in prompts", async () => {
  const t = await setup();
  try {
    const { sessionId, runId, nodeId } = t.hostile;
    const pages = [
      "/",
      `/sessions/ses_${sessionId}`,
      `/sessions/ses_${sessionId}/runs/run_${runId}/nodes/${nodeId}`,
    ];
    const root = (await t.waymark.store.db.selectFrom("nodes").select("node_id")
      .where("run_id", "=", runId).where("parent_id", "is", null).executeTakeFirstOrThrow())
      .node_id;
    pages.push(`/sessions/ses_${sessionId}/runs/run_${runId}/nodes/${root}`);
    for (const path of pages) {
      const html = await (await t.get(path)).text();
      // the only script element is the viewer's own
      const scripts = html.match(/<script\b[^>]*>/gi) ?? [];
      assert.deepEqual(scripts, ['<script src="/assets/app.js" defer="">'], path);
      // no real tag carries an event handler (the hostile text shows up escaped, as text)
      const tags = html.match(/<[a-z][^>]*>/gi) ?? [];
      assert.deepEqual(tags.filter((tag) => /\son\w+\s*=/i.test(tag)), [], path);
      assert.deepEqual(
        tags.filter((tag) => /^<(img|iframe|object|embed|style|base)\b/i.test(tag)),
        [],
      );
      assert.doesNotMatch(html, /href="\s*(javascript|vbscript|data):/i, path);
      assert.doesNotMatch(html, /style="/i, "no inline style (the CSP forbids it)");
      assert.match(html, /&lt;script&gt;/, `${path} shows the hostile text as text`);
    }
    const json = await t.get(`/api/sessions/ses_${sessionId}`);
    assert.match(json.headers.get("content-type") ?? "", /application\/json/);
    assert.equal(json.headers.get("x-content-type-options"), "nosniff");
    await json.body?.cancel();
  } finally {
    await t.close();
  }
});

Deno.test("viewer Markdown export: runs, branches, notes quoted, artifacts, as an attachment", async () => {
  const t = await setup();
  try {
    const res = await t.get(`/sessions/ses_${t.review.sessionId}/export.md`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/markdown/);
    assert.match(
      res.headers.get("content-disposition") ?? "",
      /^attachment; filename="waymark-ses_/,
    );
    const md = await res.text();
    assert.match(md, /^# Review PR \\#42: retry logic in the uploader\n/);
    assert.match(md, /## Run 1: /);
    assert.match(md, /### Preferred branch/);
    assert.match(md, /### Branch 2, forked from `[0-9a-f]+`/);
    assert.match(md, /> Retries failed uploads with \*\*exponential backoff\*\*\./);
    assert.match(md, /"kind": "diff_range"/);
    assert.match(md, /Pending: Review the tests `review-tests`/);
    // a hostile session's notes cannot add headings to the export
    const hostile = await (await t.get(`/sessions/ses_${t.hostile.sessionId}/export.md`)).text();
    assert.ok(hostile.split("\n").filter((l) => l.startsWith("<script")).length === 0);
    const missing = await t.get("/sessions/ses_ffff/export.md");
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
  } finally {
    await t.close();
  }
});

Deno.test("viewer bundle: the session page links it; /api/sessions/ID/bundle is the export, as an attachment", async () => {
  const t = await setup();
  try {
    const sid = `ses_${t.review.sessionId}`;
    const page = await (await t.get(`/sessions/${sid}`)).text();
    assert.match(
      page,
      new RegExp(`<a href="/api/sessions/${sid}/bundle" download="" class="download-bundle">`),
    );
    const res = await t.get(`/api/sessions/${sid}/bundle`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(res.headers.get("content-disposition"), `attachment; filename="${sid}.json"`);
    const exported = await exportSession(t.waymark, sid);
    assert.ok(exported.ok);
    assert.equal(await res.text(), exported.value.text);
    const missing = await t.get("/api/sessions/ses_ffffffffffffffff/bundle");
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).error.code, "NOT_FOUND");
    const posted = await t.get(`/api/sessions/${sid}/bundle`, { method: "POST" });
    assert.equal(posted.status, 405, "the viewer stays read-only");
    await posted.body?.cancel();
  } finally {
    await t.close();
  }
});

Deno.test("viewer live updates: the session's event stream says 'changed' when an advance lands", async () => {
  const t = await setup();
  try {
    const res = await t.get(`/api/sessions/ses_${t.review.sessionId}/events`);
    assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const until = async (pattern: RegExp) => {
      const deadline = Date.now() + 5000;
      while (!pattern.test(text)) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} in ${text}`);
        const { value, done } = await reader.read();
        if (done) throw new Error("stream ended");
        text += value;
      }
    };
    await until(/event: version\ndata: (\d+@[^\n]+)\n/);
    const first = /event: version\ndata: ([^\n]+)/.exec(text)![1]!;
    await advance(inProcess(t.waymark), t.review.newTip, "Another step, seen live.");
    await until(/event: changed\ndata: [^\n]+\n/);
    const changed = /event: changed\ndata: ([^\n]+)/.exec(text)![1]!;
    assert.notEqual(changed, first);
    await reader.cancel();
    const listEvents = await t.get("/api/events");
    const r2 = listEvents.body!.pipeThrough(new TextDecoderStream()).getReader();
    const chunk = await r2.read();
    assert.match(chunk.value ?? "", /event: version/);
    await r2.cancel();
    const head = await t.get(`/api/sessions/ses_${t.review.sessionId}/events`, { method: "HEAD" });
    assert.equal(head.status, 200);
    await head.body?.cancel();
  } finally {
    await t.close();
  }
});

Deno.test("viewer workspace filter: sessions are told apart by the workspace their runs recorded", async () => {
  const { home, cleanup } = await tempHome();
  const waymark = await openWaymark({ home });
  const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => [HOST], pollMs: 50 });
  const get = (path: string) =>
    Promise.resolve(viewer.app.request(path, { headers: { host: HOST } }));
  try {
    const at = (workspace: string) => ({
      workspace: { workspace, gitBranch: "main", gitHeadSha: null },
    });
    const alpha = await startWorkflow(waymark.deps, {
      workflowId: "waymark.code_review",
      goal: "Alpha review",
    }, at("/work/alpha"));
    const beta = await startWorkflow(waymark.deps, {
      workflowId: "waymark.code_review",
      goal: "Beta review",
    }, at("/work/beta"));
    assert.ok(alpha.ok && beta.ok);
    const all = await (await get("/")).text();
    assert.match(all, /Alpha review/);
    assert.match(all, /Beta review/);
    assert.match(all, /<option value="\/work\/alpha"/, "the filter offers the recorded workspaces");
    const filtered = await (await get(`/?workspace=${encodeURIComponent("/work/beta")}`)).text();
    assert.match(filtered, /Beta review/);
    assert.doesNotMatch(filtered, /Alpha review/);
    const none = await (await get(`/?workspace=${encodeURIComponent("/work/gamma")}`)).text();
    assert.match(none, /No session matches these filters/);
  } finally {
    viewer.close();
    await waymark.close();
    await cleanup();
  }
});
