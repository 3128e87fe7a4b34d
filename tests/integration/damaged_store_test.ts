/**
 * A destroyed database file (its header cut, no WAL) is said the same way by every command that
 * opens the store: what is damaged, `waymark doctor`, the latest backup, moving the file aside;
 * never a bare `fatal: file is not a database`.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS, isGroup } from "../../cli/commands.ts";
import { runCli } from "../helpers/maintenance.ts";
import { connect, ok, tempHome } from "../helpers/server.ts";
import { serveAsProcesses } from "../helpers/in_process.ts";

/** The servers here are processes: that is what these tests are about. */
serveAsProcesses();

/** Each command that opens the store, as run here (the bundle and out folder are filled in). */
const OPENING: Record<string, (at: { bundle: string; out: string }) => string[]> = {
  "serve": () => ["serve", "--http", "0"],
  "view": () => ["view", "--port", "0"],
  "workflows list": () => ["workflows", "list"],
  "workflows inspect": () => ["workflows", "inspect", "waymark.bug_investigation"],
  "sessions list": () => ["sessions", "list"],
  "sessions show": () => ["sessions", "show", "ses_0000000000000000"],
  "sessions export": (at) => ["sessions", "export", "--all", "-o", join(at.out, "all")],
  "import": (at) => ["import", at.bundle],
  "gc": () => ["gc", "--older-than", "30d"],
  "backup": (at) => ["backup", join(at.out, "copy.db")],
  "tokens create": () => ["tokens", "create", "--name", "ci"],
  "tokens list": () => ["tokens", "list"],
  "tokens revoke": () => ["tokens", "revoke", "pat_0000000000000000"],
  "review": (at) => ["review", "--files", at.bundle],
  "restore": () => ["restore", "st1_0000000000000000", "--dry-run"],
};
/**
 * Commands that do not open the store this way: `workflows try` runs in memory and `workflows new`
 * writes a file; stdio `serve` answers its client
 * (early_serve_test), `doctor` reports (below), and the hook reads the file itself and never
 * fails its host.
 */
const NOT_OPENING = [
  "workflows validate",
  "workflows try",
  "workflows new",
  "workflows schema",
  "keys rotate",
  "setup",
  "doctor",
  "hook",
];

Deno.test("every command that opens the store names a destroyed database file the same way", async () => {
  const every = Object.entries(COMMANDS).flatMap(([name, entry]) =>
    isGroup(entry) ? Object.keys(entry.subcommands).map((sub) => `${name} ${sub}`) : [name]
  );
  assert.deepEqual(
    every.filter((c) => !(c in OPENING) && !NOT_OPENING.includes(c)),
    [],
    "a new command: say here whether it opens the store",
  );
  const { home, cleanup } = await tempHome();
  const out = await Deno.makeTempDir({ prefix: "waymark-damaged-out-" });
  try {
    const client = await connect(home);
    const started = ok(
      await client.call("start_workflow", { workflowId: "waymark.bug_investigation" }),
    );
    await client.close();
    const bundle = join(out, "s.json");
    const exported = await runCli(["sessions", "export", started.session.sessionId, "-o", bundle], {
      home,
    });
    assert.equal(exported.code, 0, exported.err);
    const db = join(home, "waymark.db");
    await Deno.remove(`${db}-wal`).catch(() => {});
    await Deno.remove(`${db}-shm`).catch(() => {});
    const file = await Deno.open(db, { write: true });
    await file.write(new Uint8Array(100));
    file.close();
    for (const [name, args] of Object.entries(OPENING)) {
      const ran = await runCli(args({ bundle, out }), { home });
      assert.equal(ran.code, 1, `${name}: ${ran.err}`);
      const said = ran.err.trim().split("\n").at(-1)!;
      assert.doesNotMatch(said, /fatal/, name);
      assert.match(said, new RegExp(`${db}.+is damaged`), name);
      assert.match(said, /`waymark doctor`/, name);
      assert.match(said, /latest backup/, name);
      assert.match(said, /move .+ aside/, name);
    }
    const doctor = await runCli(["doctor", "--json"], { home });
    assert.equal(doctor.code, 2);
    const finding = JSON.parse(doctor.out).findings.find((f: { check: string }) =>
      f.check === "database"
    );
    assert.match(finding.fix, /damaged: restore .+ latest backup .+ aside/);
  } finally {
    await cleanup();
    await Deno.remove(out, { recursive: true }).catch(() => {});
  }
});
