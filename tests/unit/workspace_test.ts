/**
 * The workspace adapter: the first `file://` root wins, other schemes are skipped, and git
 * state comes from plain reads of `.git` (branch refs, packed-refs, detached HEAD, worktrees),
 * never an error outside a repository.
 */
import assert from "node:assert/strict";
import { firstFileRoot, gitState, observeWorkspace } from "../../tools/mod.ts";
import { RootsCache } from "../../tools/context/workspace.ts";

Deno.test("the first file:// root is the workspace; other schemes are skipped", () => {
  assert.equal(firstFileRoot([]), null);
  assert.equal(firstFileRoot([{ uri: "vscode-vfs://github/a/b" }]), null);
  assert.equal(
    firstFileRoot([{ uri: "https://example.com/x" }, { uri: "file:///tmp/a%20b/" }, {
      uri: "file:///tmp/c",
    }]),
    "/tmp/a b",
  );
});

Deno.test("git state from .git files: loose ref, packed ref, detached HEAD, worktree, none", async () => {
  const root = await Deno.makeTempDir({ prefix: "waymark-git-" });
  try {
    const sha1 = "1".repeat(40);
    const sha2 = "2".repeat(40);
    await Deno.mkdir(`${root}/repo/.git/refs/heads/feat`, { recursive: true });
    await Deno.mkdir(`${root}/repo/sub/dir`, { recursive: true });
    await Deno.writeTextFile(`${root}/repo/.git/HEAD`, "ref: refs/heads/feat/x\n");
    await Deno.writeTextFile(`${root}/repo/.git/refs/heads/feat/x`, `${sha1}\n`);
    assert.deepEqual(await gitState(`${root}/repo/sub/dir`), {
      gitBranch: "feat/x",
      gitHeadSha: sha1,
    });

    await Deno.mkdir(`${root}/packed/.git`, { recursive: true });
    await Deno.writeTextFile(`${root}/packed/.git/HEAD`, "ref: refs/heads/main\n");
    await Deno.writeTextFile(
      `${root}/packed/.git/packed-refs`,
      `# pack-refs with: peeled fully-peeled sorted\n${sha2} refs/heads/main\n`,
    );
    assert.deepEqual(await gitState(`${root}/packed`), { gitBranch: "main", gitHeadSha: sha2 });

    await Deno.mkdir(`${root}/detached/.git`, { recursive: true });
    await Deno.writeTextFile(`${root}/detached/.git/HEAD`, `${sha1}\n`);
    assert.deepEqual(await gitState(`${root}/detached`), { gitBranch: null, gitHeadSha: sha1 });

    // a worktree: .git is a file pointing at <common>/worktrees/wt, refs live in the common dir
    await Deno.mkdir(`${root}/packed/.git/worktrees/wt`, { recursive: true });
    await Deno.mkdir(`${root}/wt`);
    await Deno.writeTextFile(`${root}/wt/.git`, `gitdir: ${root}/packed/.git/worktrees/wt\n`);
    await Deno.writeTextFile(`${root}/packed/.git/worktrees/wt/HEAD`, "ref: refs/heads/main\n");
    await Deno.writeTextFile(`${root}/packed/.git/worktrees/wt/commondir`, "../..\n");
    assert.deepEqual(await gitState(`${root}/wt`), { gitBranch: "main", gitHeadSha: sha2 });

    await Deno.mkdir(`${root}/none`);
    const none = await observeWorkspace(`${root}/none`);
    assert.equal(none.workspace, `${root}/none`);
    assert.equal(none.gitBranch === null || typeof none.gitBranch === "string", true);
    assert.deepEqual(await observeWorkspace(null), {
      workspace: null,
      gitBranch: null,
      gitHeadSha: null,
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a roots request the negotiated era refuses at once leaves the fallback folder, not a failed call", async () => {
  const lines: string[] = [];
  const roots = new RootsCache("/srv/fallback", (line) => lines.push(line));
  const refused = () => {
    throw new Error("Method 'roots/list' is not supported by the negotiated protocol version");
  };
  assert.equal(await roots.folder(refused), "/srv/fallback");
  assert.equal(roots.fromRoots, false);
  assert.match(lines.join("\n"), /roots\/list failed \(Method 'roots\/list' is not supported/);
});
