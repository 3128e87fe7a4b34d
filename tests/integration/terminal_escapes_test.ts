/**
 * Terminal escapes in stored text never reach the terminal: a goal carrying `ESC]0;…` (window
 * title), `ESC[2J` (clear screen), `\r`, a C1 CSI and a bidi override is shown escaped by
 * `sessions list` and `sessions show`, and `--json` still parses back to the exact title.
 * @module
 */
import assert from "node:assert/strict";
import { openWaymark } from "../../mod.ts";
import { runCli } from "../helpers/maintenance.ts";
import { dbUrlOf, tempHome } from "../helpers/server.ts";

const HOSTILE = "fix \u001b]0;pwned\u0007 it\u001b[2J\rgone \u009b31m \u202eevil \u007f end";

/** Characters a terminal acts on; none may be printed raw. */
// deno-lint-ignore no-control-regex
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

Deno.test("sessions list and show print control characters escaped; --json keeps the exact title", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const wm = await openWaymark({ home, dbUrl: dbUrlOf(home) });
    let sessionLabel: string;
    try {
      const started = await wm.start({ workflowId: "waymark.code_review", goal: HOSTILE });
      assert.ok(started.ok, JSON.stringify(started));
      sessionLabel = String(started.value.session!.sessionId);
    } finally {
      await wm.close();
    }
    const list = await runCli(["sessions", "list"], { home });
    assert.equal(list.code, 0, list.err);
    const show = await runCli(["sessions", "show", sessionLabel], { home });
    assert.equal(show.code, 0, show.err);
    for (const [name, out] of [["list", list.out], ["show", show.out]]) {
      assert.doesNotMatch(out, ACTIVE, `${name} printed a raw control character`);
      assert.match(out, /fix \\u001b\]0;pwned\\u0007 it\\u001b\[2J(\\u000d| )gone \\u009b31m/);
      assert.match(out, /\\u202eevil \\u007f end/);
    }
    const json = await runCli(["sessions", "list", "--json"], { home });
    assert.equal(json.code, 0, json.err);
    assert.doesNotMatch(json.out, ACTIVE);
    const parsed = JSON.parse(json.out) as { sessions: { title: string }[] };
    assert.equal(parsed.sessions[0]!.title, HOSTILE);
  } finally {
    await cleanup();
  }
});
