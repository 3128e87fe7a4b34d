/**
 * `waymark workflows validate FILE`: a file that calls a routine beside it validates with the
 * expanded step count and its hash; a file defining `waymark.*` is refused with the rename.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { MAIN } from "../helpers/server.ts";
import { writeDelegationWorkflows } from "../helpers/delegation.ts";

async function validate(...files: string[]): Promise<{ code: number; out: string; err: string }> {
  const ran = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "workflows", "validate", ...files],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: ran.code, out: text(ran.stdout), err: text(ran.stderr) };
}

Deno.test("workflows validate expands routines beside the file and refuses waymark.* outside bundled", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-validate-" });
  try {
    await Deno.mkdir(join(dir, "routines"));
    await Deno.writeTextFile(
      join(dir, "routines", "check.json"),
      JSON.stringify({
        id: "team.routine-check",
        name: "Check",
        description: "d",
        version: "1",
        steps: [{ id: "a", title: "A", prompt: "a" }, { id: "b", title: "B", prompt: "b" }],
      }),
    );
    const caller = join(dir, "caller.jsonc");
    await Deno.writeTextFile(
      caller,
      `// calls a routine\n${
        JSON.stringify({
          $schema: "./workflow.schema.json",
          id: "team.caller",
          name: "Caller",
          description: "d",
          version: "1",
          steps: [
            { id: "s", title: "S", prompt: "s" },
            { id: "c", title: "C", templateCall: { templateId: "team.templates.routine.check" } },
          ],
        })
      }`,
    );
    const good = await validate(caller);
    assert.equal(good.code, 0, good.err);
    assert.match(good.out, /ok \(team\.caller, 3 steps, sha256:[0-9a-f]{64}\)/);
    const reserved = join(dir, "reserved.json");
    await Deno.writeTextFile(
      reserved,
      JSON.stringify({
        id: "waymark.mine",
        name: "M",
        description: "d",
        version: "1",
        steps: [{ id: "s", title: "S", prompt: "s" }],
      }),
    );
    // several files: each is validated as alone, the exit code is the worst
    const bad = await validate(reserved, caller);
    assert.equal(bad.code, 1);
    assert.match(
      bad.err,
      /reserved for workflows bundled with waymark; rename it, for example to `team\.mine`/,
    );
    assert.equal(bad.out, good.out, "the good file after the bad one is still validated");
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("workflows validate reports placeholders that no loop variable or named context key can fill", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-validate-" });
  try {
    const file = join(dir, "holes.json");
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        id: "team.holes",
        name: "Holes",
        description: "d",
        version: "1",
        steps: [
          { id: "a", title: "A", prompt: "Ticket {{ticket}}, item {{currentItem}}, {{mode}}." },
          {
            id: "each",
            type: "loop",
            title: "Each",
            loop: { type: "forEach", items: "files", maxIterations: 10 },
            body: [{ id: "b", title: "B", prompt: "{{currentItem}} of {{files.length}}" }],
          },
          {
            id: "c",
            title: "C",
            prompt: "Mode {{mode}}",
            runCondition: { var: "mode", equals: "fast" },
          },
        ],
      }),
    );
    const ran = await validate(file);
    assert.equal(ran.code, 0, ran.err);
    const warnings = ran.out.split("\n").filter((l) =>
      l.startsWith("warning [UNFILLED_PLACEHOLDER]")
    );
    assert.equal(warnings.length, 2, ran.out);
    assert.match(warnings[0]!, /step `a` uses \{\{ticket\}\}/);
    assert.match(warnings[1]!, /step `a` uses \{\{currentItem\}\}/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("workflows validate names a parallel step's delegation that nothing beside the file provides", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-validate-" });
  try {
    await writeDelegationWorkflows(dir);
    const folder = join(dir, ".waymark", "workflows");
    const parent = join(folder, "fanout.json");
    const found = await validate(parent);
    assert.equal(found.code, 0, found.err);
    assert.doesNotMatch(found.out, /DELEGATION_UNAVAILABLE/);
    await Deno.remove(join(folder, "review_part.json"));
    const missing = await validate(parent);
    assert.equal(missing.code, 0, missing.err);
    assert.match(missing.out, /warning \[DELEGATION_UNAVAILABLE\]: .*`project\.review_part`/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workflows validate lists the verification commands a workflow wants, and whether the user's config allows each here", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-validate-" }));
  try {
    await Deno.mkdir(join(dir, "home"));
    await Deno.writeTextFile(
      join(dir, "home", "config.json"),
      JSON.stringify({ verification: { workspaces: { [dir]: { allow: ["deno test *"] } } } }),
    );
    await Deno.writeTextFile(
      join(dir, "wf.json"),
      JSON.stringify({
        id: "team.verified",
        name: "Verified",
        description: "d",
        version: "1",
        steps: [
          { id: "t", title: "T", prompt: "t", verify: { run: ["deno", "test", "-A"], cwd: "pkg" } },
          { id: "l", title: "L", prompt: "l", verification: { command: "npm run 'lint all'" } },
          { id: "p", title: "P", prompt: "p" },
        ],
      }),
    );
    const ran = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", MAIN, "workflows", "validate", "wf.json", "--home", "home"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const out = new TextDecoder().decode(ran.stdout);
    assert.equal(ran.code, 0, new TextDecoder().decode(ran.stderr));
    assert.match(
      out,
      /commands \(2\): run by waymark on acknowledgement where the user's .*config\.json allows them/,
    );
    assert.match(out, new RegExp(`- t: \`deno test -A\` \\(in \`pkg\`\\): allowed in ${dir}\n`));
    assert.match(out, new RegExp(`- l: \`npm run 'lint all'\`: not allowed in ${dir}\n`));
    await Deno.writeTextFile(
      join(dir, "bad.json"),
      JSON.stringify({
        id: "team.bad",
        name: "Bad",
        description: "d",
        version: "1",
        steps: [{
          id: "t",
          title: "T",
          prompt: "t",
          verification: { command: "npm test | tee x" },
        }],
      }),
    );
    const bad = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", MAIN, "workflows", "validate", "bad.json"],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    assert.equal(bad.code, 1);
    assert.match(
      new TextDecoder().decode(bad.stderr),
      /verification\.command.*`\|` is shell syntax \(a pipe\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
