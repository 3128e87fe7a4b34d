/**
 * The git snapshot adapter against real repositories: a snapshot leaves the user's HEAD,
 * branch, index, stash and status as they were; changes between snapshots are counted; a
 * restore writes only differing files, removes files created since, leaves ignored files, and
 * can be undone; each refusal changes nothing; and each bad input of issue 36 has its outcome.
 * @module
 */
import assert from "node:assert/strict";
import { git, gitRepo } from "../helpers/git_repo.ts";
import { gitSnapshots } from "../../tools/snapshots/mod.ts";
import { keepRef } from "../../tools/snapshots/take.ts";

const RUN = "0123456789abcdef";

/** What the user sees of their repository: must never change under a snapshot. */
async function userState(dir: string): Promise<string> {
  const [head, branch, index, stash, status] = await Promise.all([
    git(dir, "rev-parse", "HEAD"),
    git(dir, "symbolic-ref", "-q", "HEAD").catch(() => "detached"),
    Deno.readFile(`${dir}/.git/index`).then((b) => b.join(",")),
    git(dir, "stash", "list"),
    git(dir, "--no-optional-locks", "status", "--porcelain=v1", "-uall"),
  ]);
  const stat = await Deno.stat(`${dir}/.git/index`);
  return JSON.stringify({ head, branch, index, stash, status, mtime: stat.mtime?.getTime() });
}

async function read(dir: string, path: string): Promise<string | null> {
  return await Deno.readTextFile(`${dir}/${path}`).catch(() => null);
}

Deno.test("a snapshot touches nothing of the user's and counts the changes since its parent", async () => {
  const repo = await gitRepo({ "a.txt": "one\n", "b.txt": "two\n", ".gitignore": "*.log\n" });
  try {
    await Deno.writeTextFile(`${repo.dir}/a.txt`, "one\nmore\n");
    await git(repo.dir, "add", "a.txt");
    await Deno.writeTextFile(`${repo.dir}/b.txt`, "changed\n");
    await Deno.writeTextFile(`${repo.dir}/new.txt`, "new\n");
    await Deno.writeTextFile(`${repo.dir}/x.log`, "ignored\n");
    await git(repo.dir, "stash", "list");
    const before = await userState(repo.dir);
    const snaps = gitSnapshots();
    const first = await snaps.take(repo.dir, { runId: RUN, parent: null });
    assert.deepEqual(first.notice, undefined);
    assert.deepEqual(first.changes, null);
    assert(/^[0-9a-f]{40}$/.test(first.snapshot.commit!));
    assert.deepEqual(first.snapshot.branch, "main");
    assert.deepEqual(first.snapshot.dirty, true);
    assert.deepEqual(await userState(repo.dir), before);
    const files = await git(repo.dir, "ls-tree", "-r", "--name-only", first.snapshot.commit!);
    assert.deepEqual(files.trim().split("\n").sort(), [".gitignore", "a.txt", "b.txt", "new.txt"]);
    assert.deepEqual(
      (await git(repo.dir, "for-each-ref", "--format=%(refname)", `refs/waymark/${RUN}/`)).trim(),
      `refs/waymark/${RUN}/${first.snapshot.commit}`,
    );

    await Deno.remove(`${repo.dir}/b.txt`);
    await Deno.writeTextFile(`${repo.dir}/new.txt`, "new\nline\nthree\n");
    await Deno.writeTextFile(`${repo.dir}/other.txt`, "x\n");
    const second = await snaps.take(repo.dir, { runId: RUN, parent: first.snapshot.commit });
    const c = second.changes!;
    assert.deepEqual([c.added, c.modified, c.deleted], [1, 1, 1]);
    assert.deepEqual([c.linesAdded, c.linesRemoved], [3, 1]);
    assert.deepEqual(c.files.map((f) => `${f.status}:${f.path}`).sort(), [
      "added:other.txt",
      "deleted:b.txt",
      "modified:new.txt",
    ]);
    assert(c.diff.includes("+three"));
    assert.deepEqual(c.diffTruncated, false);
    // the same files give the same commit: two servers keep the same ref, never two
    const again = await snaps.take(repo.dir, { runId: RUN, parent: null });
    assert.deepEqual(again.snapshot.commit, second.snapshot.commit);
  } finally {
    await repo.cleanup();
  }
});

Deno.test("restore writes what differs, removes what is new, leaves ignored files, and undoes", async () => {
  const repo = await gitRepo({ "a.txt": "one\n", "keep/k.txt": "k\n", ".gitignore": "*.log\n" });
  try {
    const snaps = gitSnapshots();
    const first = await snaps.take(repo.dir, { runId: RUN, parent: null });
    await Deno.writeTextFile(`${repo.dir}/a.txt`, "later\n");
    await Deno.mkdir(`${repo.dir}/made/deep`, { recursive: true });
    await Deno.writeTextFile(`${repo.dir}/made/deep/n.txt`, "new\n");
    await Deno.writeTextFile(`${repo.dir}/x.log`, "ignored\n");
    const userBefore = (await userState(repo.dir)).replace(/"status":"[^"]*",/, "");
    const dry = await snaps.restore(repo.dir, {
      runId: RUN,
      commit: first.snapshot.commit!,
      dryRun: true,
    });
    assert(dry.ok);
    assert.deepEqual(dry.value.written, ["a.txt"]);
    assert.deepEqual(dry.value.deleted, ["made/deep/n.txt"]);
    assert.deepEqual(dry.value.before, null);
    assert.deepEqual(await read(repo.dir, "a.txt"), "later\n");

    const done = await snaps.restore(repo.dir, {
      runId: RUN,
      commit: first.snapshot.commit!,
      dryRun: false,
    });
    assert(done.ok);
    assert.deepEqual(await read(repo.dir, "a.txt"), "one\n");
    assert.deepEqual(await read(repo.dir, "made/deep/n.txt"), null);
    assert.deepEqual(await Deno.stat(`${repo.dir}/made`).catch(() => null), null);
    assert.deepEqual(await read(repo.dir, "x.log"), "ignored\n");
    assert.deepEqual((await userState(repo.dir)).replace(/"status":"[^"]*",/, ""), userBefore);

    const undo = await snaps.restore(repo.dir, {
      runId: RUN,
      commit: done.value.before!,
      dryRun: false,
    });
    assert(undo.ok);
    assert.deepEqual(await read(repo.dir, "a.txt"), "later\n");
    assert.deepEqual(await read(repo.dir, "made/deep/n.txt"), "new\n");
  } finally {
    await repo.cleanup();
  }
});

Deno.test("every refusal changes nothing", async () => {
  const repo = await gitRepo({ "a.txt": "one\n" });
  try {
    const snaps = gitSnapshots();
    const first = await snaps.take(repo.dir, { runId: RUN, parent: null });
    await Deno.writeTextFile(`${repo.dir}/a.txt`, "later\n");
    const refs = () => git(repo.dir, "for-each-ref");
    const state = async () => JSON.stringify([await userState(repo.dir), await refs()]);
    const cases: [string, () => Promise<void>, string][] = [
      ["not in this run", async () => {}, "snapshot_not_in_run"],
      [
        "merge",
        () => Deno.writeTextFile(`${repo.dir}/.git/MERGE_HEAD`, first.snapshot.head!),
        "git_operation_in_progress",
      ],
      ["rebase", () => Deno.mkdir(`${repo.dir}/.git/rebase-merge`), "git_operation_in_progress"],
      [
        "cherry-pick",
        () => Deno.writeTextFile(`${repo.dir}/.git/CHERRY_PICK_HEAD`, first.snapshot.head!),
        "git_operation_in_progress",
      ],
      [
        "bisect",
        () => Deno.writeTextFile(`${repo.dir}/.git/BISECT_LOG`, ""),
        "git_operation_in_progress",
      ],
    ];
    for (const [what, arrange, reason] of cases) {
      await arrange();
      const before = await state();
      const runId = what === "not in this run" ? "fedcba9876543210" : RUN;
      const out = await snaps.restore(repo.dir, {
        runId,
        commit: first.snapshot.commit!,
        dryRun: false,
      });
      assert(!out.ok, what);
      assert.deepEqual(out.refusal.reason, reason, what);
      assert.deepEqual(await state(), before, what);
      assert.deepEqual(await read(repo.dir, "a.txt"), "later\n");
      for (const f of ["MERGE_HEAD", "rebase-merge", "CHERRY_PICK_HEAD", "BISECT_LOG"]) {
        await Deno.remove(`${repo.dir}/.git/${f}`, { recursive: true }).catch(() => {});
      }
    }
    const elsewhere = await gitRepo({ "z.txt": "z\n" });
    try {
      const out = await snaps.restore(elsewhere.dir, {
        runId: RUN,
        commit: first.snapshot.commit!,
        dryRun: false,
      });
      assert(!out.ok);
      assert.deepEqual(out.refusal.reason, "snapshot_not_in_repository");
      assert.deepEqual(await read(elsewhere.dir, "z.txt"), "z\n");
    } finally {
      await elsewhere.cleanup();
    }
  } finally {
    await repo.cleanup();
  }
});

Deno.test("outside git: no snapshot, one notice", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-nogit-" });
  try {
    const taken = await gitSnapshots().take(dir, { runId: RUN, parent: null });
    assert.deepEqual(taken.snapshot.commit, null);
    assert.deepEqual(taken.notice?.code, "SNAPSHOT_NOT_A_REPOSITORY");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("over the time budget the snapshot is skipped with a notice", async () => {
  const repo = await gitRepo({ "a.txt": "one\n" });
  try {
    const taken = await gitSnapshots({ budgetMs: 0 }).take(repo.dir, { runId: RUN, parent: null });
    assert.deepEqual(taken.snapshot.commit, null);
    assert.deepEqual(taken.notice?.code, "SNAPSHOT_OVER_BUDGET");
    assert.deepEqual(await git(repo.dir, "for-each-ref", "refs/waymark/"), "");
  } finally {
    await repo.cleanup();
  }
});

Deno.test("bad input: a symlink out of the repository, an unreadable file, a 50 MB binary", async () => {
  const repo = await gitRepo({ "a.txt": "one\n" });
  try {
    const snaps = gitSnapshots({ budgetMs: 20_000 });
    await Deno.symlink("/etc/hostname", `${repo.dir}/out`);
    const big = new Uint8Array(50 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
    await Deno.writeFile(`${repo.dir}/big.bin`, big);
    const first = await snaps.take(repo.dir, { runId: RUN, parent: null });
    assert.ok(first.snapshot.commit);
    // the link is kept as a link (its target's text), never followed
    const link = await git(repo.dir, "ls-tree", first.snapshot.commit!, "out");
    assert(link.startsWith("120000"));
    await Deno.writeTextFile(`${repo.dir}/secret.txt`, "s\n");
    await Deno.chmod(`${repo.dir}/secret.txt`, 0o000);
    const unreadable = Deno.uid() !== 0;
    const second = await snaps.take(repo.dir, { runId: RUN, parent: first.snapshot.commit });
    assert.ok(second.snapshot.commit);
    if (unreadable) {
      assert.deepEqual(second.notice?.code, "SNAPSHOT_PARTIAL");
      assert(second.notice!.message.includes("secret.txt"));
      const refused = await snaps.restore(repo.dir, {
        runId: RUN,
        commit: first.snapshot.commit!,
        dryRun: false,
      });
      assert(!refused.ok);
      assert.deepEqual(refused.refusal.reason, "unreadable_files");
    }
    await Deno.chmod(`${repo.dir}/secret.txt`, 0o644);
    await Deno.remove(`${repo.dir}/big.bin`);
    await Deno.remove(`${repo.dir}/out`);
    const back = await snaps.restore(repo.dir, {
      runId: RUN,
      commit: first.snapshot.commit!,
      dryRun: false,
    });
    assert(back.ok);
    assert.deepEqual((await Deno.stat(`${repo.dir}/big.bin`)).size, big.length);
    assert.deepEqual(await Deno.readLink(`${repo.dir}/out`), "/etc/hostname");
    assert.deepEqual(await read(repo.dir, "secret.txt"), null);
  } finally {
    await repo.cleanup();
  }
});

Deno.test("bad input: core.autocrlf, a submodule, a sparse checkout", async () => {
  const repo = await gitRepo({ "a.txt": "one\ntwo\n", "dir/b.txt": "b\n" });
  const sub = await gitRepo({ "s.txt": "s\n" });
  try {
    const snaps = gitSnapshots();
    await git(repo.dir, "config", "core.autocrlf", "true");
    await Deno.writeTextFile(`${repo.dir}/a.txt`, "one\r\ntwo\r\nthree\r\n");
    const crlf = await snaps.take(repo.dir, { runId: RUN, parent: null });
    // stored as `git add` stores it: line endings normalised
    assert.equal(await git(repo.dir, "show", `${crlf.snapshot.commit}:a.txt`), "one\ntwo\nthree\n");
    await Deno.writeTextFile(`${repo.dir}/a.txt`, "changed\r\n");
    const back = await snaps.restore(repo.dir, {
      runId: RUN,
      commit: crlf.snapshot.commit!,
      dryRun: false,
    });
    assert.ok(back.ok);
    assert.equal(await read(repo.dir, "a.txt"), "one\r\ntwo\r\nthree\r\n");

    await git(
      repo.dir,
      "-c",
      "protocol.file.allow=always",
      "submodule",
      "add",
      "-q",
      sub.dir,
      "sub",
    );
    const withSub = await snaps.take(repo.dir, { runId: RUN, parent: crlf.snapshot.commit });
    assert.ok(
      (await git(repo.dir, "ls-tree", withSub.snapshot.commit!, "sub")).startsWith("160000"),
    );
    const subHead = await git(`${repo.dir}/sub`, "rev-parse", "HEAD");
    const undo = await snaps.restore(repo.dir, {
      runId: RUN,
      commit: crlf.snapshot.commit!,
      dryRun: true,
    });
    assert.ok(undo.ok);
    assert.deepEqual(undo.value.skipped.map((s) => s.path), ["sub"]);
    assert.equal(await git(`${repo.dir}/sub`, "rev-parse", "HEAD"), subHead);

    await git(repo.dir, "sparse-checkout", "set", "--no-cone", "/a.txt");
    const sparse = await snaps.take(repo.dir, { runId: RUN, parent: null });
    assert.ok(sparse.snapshot.commit);
    // out of the cone, the file is kept as the index has it
    assert.equal(await git(repo.dir, "show", `${sparse.snapshot.commit}:dir/b.txt`), "b\n");
    const refused = await snaps.restore(repo.dir, {
      runId: RUN,
      commit: crlf.snapshot.commit!,
      dryRun: false,
    });
    assert.ok(!refused.ok);
    assert.equal(refused.refusal.reason, "sparse_checkout");
  } finally {
    await repo.cleanup();
    await sub.cleanup();
  }
});

Deno.test("a user's commit during snapshots, and two snapshotters at once, collide with nothing", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 2000; i++) files[`f/${i}.txt`] = `${i}\n`;
  const repo = await gitRepo(files);
  try {
    for (let i = 0; i < 200; i++) await Deno.writeTextFile(`${repo.dir}/f/${i}.txt`, `new ${i}\n`);
    const a = gitSnapshots({ budgetMs: 30_000 });
    const b = gitSnapshots({ budgetMs: 30_000 });
    const commit = (async () => {
      await git(repo.dir, "add", "f/0.txt", "f/1.txt");
      await git(repo.dir, "commit", "-q", "-m", "user's own");
    })();
    const [one, two, three] = await Promise.all([
      a.take(repo.dir, { runId: RUN, parent: null }),
      b.take(repo.dir, { runId: RUN, parent: null }),
      b.take(repo.dir, { runId: "fedcba9876543210", parent: null }),
      commit,
    ]);
    for (const t of [one, two, three]) assert.equal(t.notice?.message, undefined);
    assert.equal(await git(repo.dir, "log", "-1", "--format=%s"), "user's own\n");
    // each snapshot holds every file's content on disk, whichever side of the commit it saw
    for (const t of [one, two, three]) {
      assert.equal(await git(repo.dir, "show", `${t.snapshot.commit}:f/5.txt`), "new 5\n");
    }
    const refs = await git(repo.dir, "for-each-ref", "--format=%(refname)", "refs/waymark/");
    assert.ok(refs.split("\n").filter((r) => r).length >= 2);
    assert.equal(await git(repo.dir, "status", "--porcelain", "f/0.txt"), "");
  } finally {
    await repo.cleanup();
  }
});

Deno.test("forget removes a run's refs and no other run's", async () => {
  const repo = await gitRepo({ "a.txt": "one\n" });
  try {
    const snaps = gitSnapshots();
    await snaps.take(repo.dir, { runId: RUN, parent: null });
    await Deno.writeTextFile(`${repo.dir}/a.txt`, "two\n");
    await snaps.take(repo.dir, { runId: RUN, parent: null });
    const other = await snaps.take(repo.dir, { runId: "fedcba9876543210", parent: null });
    assert.equal(await snaps.forget(repo.dir, [RUN]), 2);
    assert.equal(
      (await git(repo.dir, "for-each-ref", "--format=%(refname)", "refs/waymark/")).trim(),
      `refs/waymark/fedcba9876543210/${other.snapshot.commit}`,
    );
  } finally {
    await repo.cleanup();
  }
});

Deno.test("a ref git wrote before the budget killed it counts as kept: no snapshot answered as not taken leaves a ref", async () => {
  const repo = await gitRepo({ "a.txt": "one\n" });
  try {
    const sha = (await git(repo.dir, "rev-parse", "HEAD")).trim();
    const past = Date.now() - 1;
    // past the budget, no git is started: the ref is not there, so it is not kept
    const missing = await keepRef(repo.dir, { sha, runId: RUN, deadline: past });
    assert.equal(missing?.timedOut, true);
    assert.equal(await git(repo.dir, "for-each-ref", "refs/waymark/"), "");
    // as if `update-ref` had written it and then been killed at the deadline
    await git(repo.dir, "update-ref", `refs/waymark/${RUN}/${sha}`, sha);
    assert.equal(await keepRef(repo.dir, { sha, runId: RUN, deadline: past }), null);
  } finally {
    await repo.cleanup();
  }
});

Deno.test("bad input: 100,000 files: a snapshot within the budget or none and a notice, the user's repository as it was", async () => {
  // in memory: creating the 100,000 files on the disk was the file's CPU (system time in its
  // journal, 10 to 60 s when other tests write at once), not the snapshot's
  const repo = await gitRepo({ "a.txt": "one\n" }, { inMemory: true });
  try {
    for (let d = 0; d < 100; d++) {
      await Deno.mkdir(`${repo.dir}/many/${d}`, { recursive: true });
      await Promise.all(
        Array.from(
          { length: 1000 },
          (_, i) => Deno.writeTextFile(`${repo.dir}/many/${d}/${i}`, `${i}\n`),
        ),
      );
    }
    const before = await userState(repo.dir);
    const t0 = Date.now();
    const taken = await gitSnapshots({ budgetMs: 3000 }).take(repo.dir, {
      runId: RUN,
      parent: null,
    });
    // the budget ends the snapshot, however large the tree: a step waits no longer than it
    assert.ok(Date.now() - t0 < 3000 + 2000, `took ${Date.now() - t0} ms`);
    if (taken.snapshot.commit === null) {
      assert.equal(taken.notice?.code, "SNAPSHOT_OVER_BUDGET");
      assert.equal(await git(repo.dir, "for-each-ref", "refs/waymark/"), "");
    } else {
      assert.equal(taken.notice, undefined);
      const listed = await git(repo.dir, "ls-tree", "-r", "--name-only", taken.snapshot.commit);
      assert.equal(listed.trim().split("\n").length, 100_001);
    }
    assert.equal(await userState(repo.dir), before);
    assert.equal(await Deno.stat(`${repo.dir}/.git/index.lock`).catch(() => null), null);
  } finally {
    await repo.cleanup();
  }
});
