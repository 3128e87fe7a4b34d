/**
 * What waymark keeps on disk is its user's alone, and odd homes and targets get clear refusals:
 * the home is created 0700, the database, its WAL and shared memory, backups and exported
 * bundles 0600; doctor reports looser modes and `--repair` tightens them; a home that is a file
 * or a link to nothing is refused by name (not mkdir's `EEXIST`); `backup` never writes through
 * a symbolic link; `gc --older-than 0d` says the age must be positive.
 * @module
 */
import assert from "node:assert/strict";
import { openWaymark } from "../../mod.ts";
import { runCli } from "../helpers/maintenance.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const modeOf = async (path: string) => ((await Deno.stat(path)).mode ?? 0) & 0o777;

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waymark-files-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("home 0700; database, WAL, backups and bundles 0600; doctor reports looser modes and --repair fixes them", async () => {
  await withDir(async (dir) => {
    const home = `${dir}/home`;
    const db = `${home}/waymark.db`;
    const wm = await openWaymark({ home, dbUrl: `file:${db}`, workspace: dir });
    try {
      const started = await wm.start({
        workflowId: "waymark.bug_investigation",
        goal: "sk-live-123",
      });
      assert.ok(started.ok);
      assert.equal(await modeOf(home), 0o700, "home");
      for (const file of [db, `${db}-wal`, `${db}-shm`]) {
        assert.equal(await modeOf(file), 0o600, file);
      }
    } finally {
      await wm.close();
    }
    const backup = await runCli(["backup", `${dir}/copy.db`], { home });
    assert.equal(backup.code, 0, backup.err);
    assert.equal(await modeOf(`${dir}/copy.db`), 0o600, "backup");
    const listed = JSON.parse((await runCli(["sessions", "list", "--json"], { home })).out);
    const id = listed.sessions[0].sessionId;
    const one = await runCli(["sessions", "export", id, "-o", `${dir}/one.json`], { home });
    assert.equal(one.code, 0, one.err);
    assert.equal(await modeOf(`${dir}/one.json`), 0o600, "bundle");
    const all = await runCli(["sessions", "export", "--all", "-o", `${dir}/all`], { home });
    assert.equal(all.code, 0, all.err);
    assert.equal(await modeOf(`${dir}/all/${id}.json`), 0o600, "bundle of --all");

    await Deno.chmod(home, 0o755);
    await Deno.chmod(db, 0o644);
    const loose = await runCli(["doctor", "--json"], { home });
    assert.equal(loose.code, 1, loose.out);
    const found = (JSON.parse(loose.out) as Json).findings.filter((f: Json) => !f.ok);
    assert.deepEqual(found.map((f: Json) => f.check), ["permissions"]);
    assert.match(found[0].message, /waymark\.db \(mode 0644, should be 0600\)/);
    assert.match(found[0].message, /home \(mode 0755, should be 0700\)/);
    const repaired = await runCli(["doctor", "--repair"], { home });
    assert.equal(repaired.code, 0, repaired.out);
    assert.match(repaired.out, /repaired: made 2 file\(s\) private/);
    assert.deepEqual([await modeOf(home), await modeOf(db)], [0o700, 0o600]);
  });
});

Deno.test("a home that is a file or a link to nothing is refused by name, not with EEXIST", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/file`, "not a folder");
    await Deno.symlink(`${dir}/gone`, `${dir}/dangling`);
    for (
      const [home, expected] of [
        [`${dir}/file`, /waymark home .*\/file is a file, not a folder/],
        [
          `${dir}/dangling`,
          /waymark home .*\/dangling is a symbolic link to something that does not exist/,
        ],
      ] as const
    ) {
      const ran = await runCli(["sessions", "list"], { home });
      assert.notEqual(ran.code, 0);
      assert.match(ran.err, expected);
      assert.doesNotMatch(ran.err, /EEXIST/);
    }
    assert.equal(await Deno.lstat(`${dir}/gone`).catch(() => null), null, "the link was followed");
  });
});

Deno.test("backup refuses a symbolic link, even one to nothing, and writes nothing through it", async () => {
  await withDir(async (dir) => {
    const home = `${dir}/home`;
    const wm = await openWaymark({ home, dbUrl: `file:${home}/waymark.db`, workspace: dir });
    await wm.close();
    await Deno.symlink(`${dir}/elsewhere.db`, `${dir}/link.db`);
    const ran = await runCli(["backup", `${dir}/link.db`], { home });
    assert.equal(ran.code, 1, ran.err);
    assert.match(ran.err, /already exists .*symbolic link/);
    assert.equal(await Deno.lstat(`${dir}/elsewhere.db`).catch(() => null), null);
  });
});

Deno.test("gc --older-than 0d is refused as not positive (0 would remove every idle session)", async () => {
  await withDir(async (dir) => {
    const ran = await runCli(["gc", "--older-than", "0d"], { home: dir });
    assert.equal(ran.code, 2, ran.err);
    assert.match(ran.err, /--older-than must be a positive whole number \(1 or more\)/);
  });
});
