/**
 * Token integrity: every single-character change, deletion, truncation and extension of real
 * tokens is refused with a structured error that names the token and says how to recover;
 * tokens are scoped to their run and node; swapped and foreign-key tokens are refused; refused
 * calls write nothing. Runs in-process (`openWaymark` on `:memory:`) for speed, plus one check
 * of the error envelope over a real stdio MCP connection.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  openWaymark,
  type Result,
  type SqliteStore,
  type StepResponse,
  type Waymark,
} from "../../mod.ts";
import { rotateKeyring } from "../../store/keyring.ts";
import { connect, err, ok, tempHome } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
type Field = "stateToken" | "ackToken" | "checkpointToken";
const NOTES = { notesMarkdown: "checkpoint notes" };
/** Notes for an acknowledgement (plain steps require them). */
const DONE = { notesMarkdown: "step done" };

/** Opens waymark on a throwaway home (and, by default, an in-memory database). */
async function open(dbUrl: string | undefined = ":memory:"): Promise<{
  waymark: Waymark;
  home: string;
  close(): Promise<void>;
}> {
  const home = await Deno.makeTempDir({ prefix: "waymark-tokens-" });
  const waymark = await openWaymark({ home, dbUrl });
  return {
    waymark,
    home,
    close: async () => {
      await waymark.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

function value(result: Result<StepResponse>): StepResponse {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.error)}`);
  return result.value;
}

/** Row counts and contents of every table. */
async function snapshot(
  waymark: Waymark,
): Promise<{ counts: Record<string, number>; dump: string }> {
  const client = (waymark.store as SqliteStore).client;
  const tables =
    (await client.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"))
      .rows.map((r) => String(r.name));
  assert.ok(tables.includes("events"), `unexpected tables: ${tables}`);
  const counts: Record<string, number> = {};
  const dump: Record<string, unknown[]> = {};
  for (const table of tables) {
    const quoted = `"${table.replaceAll('"', '""')}"`;
    counts[table] = Number(
      (await client.execute(`SELECT count(*) AS n FROM ${quoted}`)).rows[0]!.n,
    );
    dump[table] = (await client.execute(`SELECT * FROM ${quoted} ORDER BY ${
      // FTS5 keeps some shadow tables WITHOUT ROWID; order those by their key
      /^search_\w+_(idx|config)$/.test(table) ? 1 : "rowid"}`)).rows.map((
        r,
      ) => ({ ...r }));
  }
  return { counts, dump: JSON.stringify(dump) };
}

const RECOVERY: Record<Field, RegExp> = {
  // A damaged state token cannot be rehydrated: the recovery is to use the one returned, or restart.
  stateToken: /exactly as .*returned|start the workflow again/,
  ackToken: /continue_workflow with only the stateToken/,
  checkpointToken: /continue_workflow with only the stateToken/,
};
/** A token signed elsewhere: say so, name the key, and resume through `resume_session`. */
const FOREIGN = /signed on another machine \(key [0-9a-f]{8}\).*call resume_session/;

/** Asserts a refusal with `code` naming `field`; returns the error's details. */
function refused(
  result: Result<StepResponse>,
  code: "TOKEN_INVALID" | "TOKEN_SCOPE_MISMATCH",
  field: Field,
  label: string,
): Record<string, unknown> {
  if (result.ok) assert.fail(`${label}: accepted (${JSON.stringify(result.value).slice(0, 120)})`);
  const { error } = result;
  if (
    error.code !== code || error.details?.token !== field || !error.message.includes(field) ||
    !(error.details?.reason === "unknown_key" ? FOREIGN : RECOVERY[field]).test(error.message) ||
    error.retry.kind !== "not_retryable"
  ) {
    assert.fail(`${label}: wrong refusal ${JSON.stringify(error)}`);
  }
  return error.details!;
}

/** Every single-character replacement (by each other base64url character), deletion,
 * truncation and one-character extension of a token. */
function* damaged(token: string): Generator<[string, string]> {
  for (let i = 0; i < token.length; i++) {
    for (const ch of B64URL) {
      if (ch !== token[i]) {
        yield [`replace[${i}]=${ch}`, token.slice(0, i) + ch + token.slice(i + 1)];
      }
    }
    yield [`delete[${i}]`, token.slice(0, i) + token.slice(i + 1)];
    yield [`truncate(${i})`, token.slice(0, i)];
  }
  for (const ch of "Aa0-_") yield [`extend+${ch}`, token + ch];
}

/** The key id byte of a token (its second byte after the prefix). */
function keyIdOf(token: string): number {
  const body = token.slice(token.indexOf("_") + 1).replaceAll("-", "+").replaceAll("_", "/");
  const bytes = atob(body);
  // The key id is the 4 bytes after the kind byte.
  return ((bytes.charCodeAt(1) << 24) | (bytes.charCodeAt(2) << 16) | (bytes.charCodeAt(3) << 8) |
    bytes.charCodeAt(4)) >>> 0;
}

function assertShort(response: StepResponse): void {
  for (
    const token of [
      response.stateToken,
      response.ackToken,
      response.checkpointToken,
      response.tip?.stateToken,
    ]
  ) {
    if (token !== undefined) {
      assert.ok(token.length < 60, `token of ${token.length} characters: ${token}`);
    }
  }
}

Deno.test("every single-character change, deletion, truncation or extension of a token is refused, and nothing is written", async () => {
  const { waymark, close } = await open();
  try {
    const s0 = value(await waymark.start({ workflowId: "waymark.code_review" }));
    // Use the genuine tokens once, so the attempts they name have records.
    const s1 = value(
      await waymark.continue({ stateToken: s0.stateToken, ackToken: s0.ackToken, output: DONE }),
    );
    const cp = value(
      await waymark.checkpoint({
        stateToken: s0.stateToken,
        checkpointToken: s0.checkpointToken,
        output: NOTES,
      }),
    );
    for (const r of [s0, s1, cp]) assertShort(r);
    const state = s0.stateToken;
    const ack = s0.ackToken!;
    const chk = s0.checkpointToken;
    assert.match(state, /^st1_/);
    assert.match(ack, /^ack1_/);
    assert.match(chk, /^chk1_/);

    const before = await snapshot(waymark);
    const reasons = new Set<unknown>();
    let tried = 0;
    for (const [how, bad] of damaged(state)) {
      const label = `stateToken ${how}: ${bad}`;
      reasons.add(
        refused(
          await waymark.continue({ stateToken: bad }),
          "TOKEN_INVALID",
          "stateToken",
          `rehydrate ${label}`,
        ).reason,
      );
      refused(
        await waymark.continue({ stateToken: bad, ackToken: ack, output: DONE }),
        "TOKEN_INVALID",
        "stateToken",
        `advance ${label}`,
      );
      refused(
        await waymark.checkpoint({ stateToken: bad, checkpointToken: chk, output: NOTES }),
        "TOKEN_INVALID",
        "stateToken",
        `checkpoint ${label}`,
      );
      tried++;
    }
    for (const [how, bad] of damaged(ack)) {
      const label = `ackToken ${how}: ${bad}`;
      reasons.add(
        refused(
          await waymark.continue({ stateToken: state, ackToken: bad, output: DONE }),
          "TOKEN_INVALID",
          "ackToken",
          label,
        ).reason,
      );
      tried++;
    }
    for (const [how, bad] of damaged(chk)) {
      const label = `checkpointToken ${how}: ${bad}`;
      reasons.add(
        refused(
          await waymark.checkpoint({ stateToken: state, checkpointToken: bad, output: NOTES }),
          "TOKEN_INVALID",
          "checkpointToken",
          label,
        ).reason,
      );
      tried++;
    }
    const perChar = B64URL.length - 1 + 2;
    assert.equal(tried, (state.length + ack.length + chk.length) * perChar + 15);
    // Changes in the body are caught by the signature; changes to the key id byte name the key.
    for (const reason of ["malformed", "bad_signature", "unknown_key"]) {
      assert.ok(reasons.has(reason), `no damaged token was refused as ${reason}: ${[...reasons]}`);
    }

    // The genuine tokens still work (replays and a rehydrate, none of which write).
    assert.equal(
      JSON.stringify(
        value(await waymark.continue({ stateToken: state, ackToken: ack, output: DONE })),
      ),
      JSON.stringify(s1),
    );
    assert.equal(
      JSON.stringify(
        value(await waymark.checkpoint({ stateToken: state, checkpointToken: chk, output: NOTES })),
      ),
      JSON.stringify(cp),
    );
    assert.equal(
      placeOf(value(await waymark.continue({ stateToken: state }))).nodeId,
      placeOf(s0).nodeId,
    );
    const after = await snapshot(waymark);
    assert.deepEqual(after.counts, before.counts);
    assert.equal(after.dump, before.dump, "a refused call wrote to the database");
  } finally {
    await close();
  }
});

Deno.test("tokens are scoped to their run and node, and swapped kinds are named", async () => {
  const { waymark, close } = await open();
  try {
    const a0 = value(await waymark.start({ workflowId: "waymark.code_review" }));
    const a1 = value(
      await waymark.continue({ stateToken: a0.stateToken, ackToken: a0.ackToken, output: DONE }),
    );
    const b0 = value(await waymark.start({ workflowId: "waymark.code_review" }));
    assert.notEqual(placeOf(a0).runId, placeOf(b0).runId);
    for (const r of [a0, a1, b0]) assertShort(r);
    const before = await snapshot(waymark);

    const otherRun = refused(
      await waymark.continue({ stateToken: b0.stateToken, ackToken: a0.ackToken, output: DONE }),
      "TOKEN_SCOPE_MISMATCH",
      "ackToken",
      "ack of run A on run B",
    );
    assert.equal(otherRun.reason, "other_run");
    assert.equal(
      refused(
        await waymark.checkpoint({
          stateToken: b0.stateToken,
          checkpointToken: a0.checkpointToken,
          output: NOTES,
        }),
        "TOKEN_SCOPE_MISMATCH",
        "checkpointToken",
        "checkpoint of run A on run B",
      ).reason,
      "other_run",
    );
    // A fresh (never used) ack of run B on run A too, so the refusal is not about a used attempt.
    assert.equal(
      refused(
        await waymark.continue({ stateToken: a1.stateToken, ackToken: b0.ackToken, output: DONE }),
        "TOKEN_SCOPE_MISMATCH",
        "ackToken",
        "ack of run B on run A",
      ).reason,
      "other_run",
    );

    for (
      const [state, ack, label] of [
        [a1.stateToken, a0.ackToken!, "ack of the root on its child"],
        [a0.stateToken, a1.ackToken!, "ack of the child on the root"],
      ] as const
    ) {
      assert.equal(
        refused(
          await waymark.continue({ stateToken: state, ackToken: ack, output: DONE }),
          "TOKEN_SCOPE_MISMATCH",
          "ackToken",
          label,
        )
          .reason,
        "other_node",
      );
    }
    assert.equal(
      refused(
        await waymark.checkpoint({
          stateToken: a0.stateToken,
          checkpointToken: a1.checkpointToken,
          output: NOTES,
        }),
        "TOKEN_SCOPE_MISMATCH",
        "checkpointToken",
        "checkpoint of the child on the root",
      ).reason,
      "other_node",
    );

    const swapped: [Result<StepResponse>, Field, string][] = [
      [
        await waymark.continue({ stateToken: a1.ackToken! }),
        "stateToken",
        "ackToken as stateToken (rehydrate)",
      ],
      [
        await waymark.continue({ stateToken: a1.ackToken!, ackToken: a1.stateToken, output: DONE }),
        "stateToken",
        "state and ack swapped",
      ],
      [
        await waymark.continue({ stateToken: a1.checkpointToken }),
        "stateToken",
        "checkpointToken as stateToken",
      ],
      [
        await waymark.continue({
          stateToken: a1.stateToken,
          ackToken: a1.checkpointToken,
          output: DONE,
        }),
        "ackToken",
        "checkpointToken as ackToken",
      ],
      [
        await waymark.continue({
          stateToken: a1.stateToken,
          ackToken: a1.stateToken,
          output: DONE,
        }),
        "ackToken",
        "stateToken as ackToken",
      ],
      [
        await waymark.checkpoint({
          stateToken: a1.stateToken,
          checkpointToken: a1.ackToken!,
          output: NOTES,
        }),
        "checkpointToken",
        "ackToken as checkpointToken",
      ],
      [
        await waymark.checkpoint({
          stateToken: a1.checkpointToken,
          checkpointToken: a1.stateToken,
          output: NOTES,
        }),
        "stateToken",
        "checkpoint and state swapped",
      ],
    ];
    for (const [result, field, label] of swapped) {
      assert.equal(refused(result, "TOKEN_INVALID", field, label).reason, "wrong_kind", label);
    }

    const after = await snapshot(waymark);
    assert.deepEqual(after.counts, before.counts);
    assert.equal(after.dump, before.dump, "a refused call wrote to the database");
    // The genuine pairs still work.
    value(
      await waymark.continue({ stateToken: a1.stateToken, ackToken: a1.ackToken, output: DONE }),
    );
    value(
      await waymark.continue({ stateToken: b0.stateToken, ackToken: b0.ackToken, output: DONE }),
    );
  } finally {
    await close();
  }
});

Deno.test("a token signed by a key this waymark does not hold is refused as unknown_key", async () => {
  const here = await open();
  const foreignHome = await tempHome();
  try {
    // A foreign keyring whose current key has a different id (as after a rotation elsewhere).
    const first = await openWaymark({ home: foreignHome.home, dbUrl: ":memory:" });
    await first.close();
    await rotateKeyring(join(foreignHome.home, "keys.json"));
    const foreign = await openWaymark({ home: foreignHome.home, dbUrl: ":memory:" });
    try {
      const theirs = value(await foreign.start({ workflowId: "waymark.code_review" }));
      const ours = value(await here.waymark.start({ workflowId: "waymark.code_review" }));
      const before = await snapshot(here.waymark);
      const checks: [Result<StepResponse>, Field][] = [
        [await here.waymark.continue({ stateToken: theirs.stateToken }), "stateToken"],
        [
          await here.waymark.continue({
            stateToken: ours.stateToken,
            ackToken: theirs.ackToken,
            output: DONE,
          }),
          "ackToken",
        ],
        [
          await here.waymark.checkpoint({
            stateToken: ours.stateToken,
            checkpointToken: theirs.checkpointToken,
            output: NOTES,
          }),
          "checkpointToken",
        ],
      ];
      for (const [result, field] of checks) {
        assert.equal(
          refused(result, "TOKEN_INVALID", field, `foreign ${field}`).reason,
          "unknown_key",
        );
      }
      const after = await snapshot(here.waymark);
      assert.equal(after.dump, before.dump);
    } finally {
      await foreign.close();
    }
  } finally {
    await here.close();
    await foreignHome.cleanup();
  }
});

Deno.test("a token from another fresh WAYMARK_HOME is reported as a foreign key (unknown_key), not as tampering", async () => {
  // Two independent installations: the other one's tokens were never changed, they were simply
  // signed elsewhere. The refusal should say so (reason unknown_key), not "it was changed".
  const here = await open();
  const there = await open();
  try {
    const theirs = value(await there.waymark.start({ workflowId: "waymark.code_review" }));
    const details = refused(
      await here.waymark.continue({ stateToken: theirs.stateToken }),
      "TOKEN_INVALID",
      "stateToken",
      "token of another home",
    );
    assert.equal(details.reason, "unknown_key", `refused as ${details.reason}`);
  } finally {
    await here.close();
    await there.close();
  }
});

Deno.test("tokens minted before a key rotation still work after it", async () => {
  const home = await tempHome();
  try {
    const before = await openWaymark({ home: home.home });
    const s0 = value(await before.start({ workflowId: "waymark.code_review" }));
    await before.close();
    await rotateKeyring(join(home.home, "keys.json"));
    const after = await openWaymark({ home: home.home });
    try {
      const s1 = value(
        await after.continue({ stateToken: s0.stateToken, ackToken: s0.ackToken, output: DONE }),
      );
      assert.notEqual(placeOf(s1).nodeId, placeOf(s0).nodeId);
      assert.notEqual(
        keyIdOf(s1.stateToken),
        keyIdOf(s0.stateToken),
        "new tokens carry the new key id",
      );
      value(
        await after.continue({ stateToken: s1.stateToken, ackToken: s1.ackToken, output: DONE }),
      );
    } finally {
      await after.close();
    }
  } finally {
    await home.cleanup();
  }
});

Deno.test("over MCP stdio, a tampered token comes back as the structured error envelope", async () => {
  const home = await tempHome();
  const client = await connect(home.home, { client: "v2", process: true });
  try {
    const s0 = ok(await client.call("start_workflow", { workflowId: "waymark.code_review" }));
    const ack = s0.ackToken as string;
    const middle = Math.floor(ack.length / 2);
    const tampered = ack.slice(0, middle) + (ack[middle] === "Q" ? "R" : "Q") +
      ack.slice(middle + 1);
    for (
      const [args, field] of [
        [{ stateToken: s0.stateToken, ackToken: tampered }, "ackToken"],
        [{ stateToken: s0.stateToken.slice(0, -3) }, "stateToken"],
      ] as const
    ) {
      const result = await client.call("continue_workflow", args);
      assert.equal(result.isError, true);
      const error = err(result);
      assert.deepEqual(Object.keys(error).sort(), ["code", "details", "message", "retry"]);
      assert.equal(error.code, "TOKEN_INVALID");
      assert.deepEqual(error.retry, { kind: "not_retryable" });
      assert.equal(error.details?.token, field);
      assert.ok(error.message.includes(field));
      assert.match(error.message, RECOVERY[field]);
      const text = result.content[0]!.text;
      assert.ok(text.includes("TOKEN_INVALID") && text.includes(field), `text rendering: ${text}`);
      assert.doesNotMatch(text, /\n\s+at /, "a stack trace reached the agent");
    }
    // The genuine pair still advances after the refusals.
    assert.equal(
      ok(
        await client.call("continue_workflow", {
          stateToken: s0.stateToken,
          ackToken: ack,
          output: DONE,
        }),
      ).kind,
      "ok",
    );
  } finally {
    await client.close();
    await home.cleanup();
  }
});
