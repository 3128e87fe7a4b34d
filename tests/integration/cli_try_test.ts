/**
 * `waymark workflows try` as a process: `--json` is byte-stable and exits 1 on a defect, 0 on a
 * bundled workflow by id; a file that does not load is a `load_error` problem; nothing is written
 * under the data folder; `--watch` runs again when the file is saved.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { MAIN } from "../helpers/server.ts";

const FIXTURES = join(import.meta.dirname!, "..", "fixtures", "try");

async function tryCli(
  args: string[],
  home: string,
): Promise<{ code: number; out: string; err: string }> {
  const ran = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "workflows", "try", ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", WAYMARK_HOME: home },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: ran.code, out: text(ran.stdout), err: text(ran.stderr) };
}

Deno.test("workflows try --json: stable bytes, exit 1 on a defect, 0 for a bundled id, nothing written", async () => {
  const home = await Deno.makeTempDir({ prefix: "waymark-try-" });
  try {
    const file = join(FIXTURES, "fix_does_not_work.jsonc");
    const first = await tryCli([file, "--json"], home);
    const second = await tryCli([file, "--json"], home);
    assert.equal(first.code, 1, first.err);
    assert.equal(first.out, second.out);
    const report = JSON.parse(first.out);
    assert.equal(report.ok, false);
    assert.deepEqual(report.problems.map((p: { kind: string }) => p.kind), ["fix_does_not_work"]);
    assert.match(report.workflowHash, /^sha256:[0-9a-f]{64}$/);

    const bundled = await tryCli(["waymark.code_review"], home);
    assert.equal(bundled.code, 0, bundled.out + bundled.err);
    assert.match(bundled.out, /^waymark\.code_review: ok\npaths: walked \d+ of \d+/);

    const broken = await tryCli([join(FIXTURES, "load_error.jsonc"), "--json"], home);
    assert.equal(broken.code, 1);
    const failed = JSON.parse(broken.out);
    assert.equal(failed.workflowId, "trytest.load_error");
    assert.equal(failed.problems[0].kind, "load_error");
    assert.match(failed.problems[0].message, /load_error\.jsonc: steps\[0\]\.templateCall/);

    const unknown = await tryCli(["team.nothing_here"], home);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no such file, and no workflow with that id/);
    assert.deepEqual([...Deno.readDirSync(home)], [], "try wrote under the data folder");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  seen: { text: string },
  pattern: RegExp,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!pattern.test(seen.text)) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no ${pattern} within 60 s: ${seen.text}`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    const { value, done } = await Promise.race([reader.read(), late]).finally(() =>
      clearTimeout(timer)
    );
    if (done) throw new Error(`output ended before ${pattern}: ${seen.text}`);
    seen.text += value;
  }
}

Deno.test("workflows try --watch runs again when the file is saved", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-try-watch-" });
  const file = join(dir, "mine.jsonc");
  const workflow = (prompt: string) =>
    JSON.stringify({
      id: "team.watched",
      name: "Watched",
      description: "d",
      version: "1",
      steps: [{ id: "only", title: "Only", prompt }],
    });
  await Deno.writeTextFile(file, workflow("Say {{who}} is done."));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "workflows", "try", "--watch", file],
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1", WAYMARK_HOME: dir },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const seen = { text: "" };
  try {
    await readUntil(reader, seen, /\[unset_placeholder\]/);
    await Deno.writeTextFile(file, workflow("Say it is done."));
    await readUntil(reader, seen, /changed\nteam\.watched: ok\n/);
  } finally {
    child.kill();
    await reader.cancel();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

async function cli(
  args: string[],
  cwd: string,
): Promise<{ code: number; out: string; err: string }> {
  const ran = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", WAYMARK_HOME: join(cwd, "home") },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: ran.code, out: text(ran.stdout), err: text(ran.stderr) };
}

Deno.test("workflows new writes a file that validates, tries clean and is listed; it never overwrites", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-new-" });
  try {
    const made = await cli(["workflows", "new", "team.release"], dir);
    assert.equal(made.code, 0, made.err);
    const file = join(dir, ".waymark", "workflows", "team.release.jsonc");
    const text = await Deno.readTextFile(file);
    assert.match(text, /"\$schema": "\.\/workflow\.schema\.json"/);
    const schema = JSON.parse(
      await Deno.readTextFile(join(dir, ".waymark", "workflows", "workflow.schema.json")),
    );
    assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
    const validated = await cli(["workflows", "validate", file], dir);
    assert.equal(validated.code, 0, validated.err);
    assert.doesNotMatch(validated.out, /warning/);
    const tried = await cli(["workflows", "try", "team.release"], dir);
    assert.equal(tried.code, 0, tried.out);
    assert.match(tried.out, /^team\.release: ok\n/);
    assert.match(tried.out, /look-deeper: \d+ bytes/);

    const again = await cli(["workflows", "new", "team.release"], dir);
    assert.equal(again.code, 1);
    assert.match(again.err, /exists; nothing was written/);
    assert.equal(await Deno.readTextFile(file), text);
    const reserved = await cli(["workflows", "new", "waymark.mine"], dir);
    assert.equal(reserved.code, 1);
    assert.match(reserved.err, /reserved for bundled workflows/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an overlay: try and validate say its base changed; inspect shows its layers and step origins", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-overlay-cli-" });
  try {
    const folder = join(dir, ".waymark", "workflows");
    await Deno.mkdir(folder, { recursive: true });
    const file = join(folder, "plus.overlay.jsonc");
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        id: "team.plus",
        overlay: {
          base: "waymark.code_review",
          baseHash: `sha256:${"2".repeat(64)}`,
          changes: [{
            insertBefore: "review-tests",
            steps: [{ id: "licences", title: "Licences", prompt: "Check the licences." }],
          }],
        },
      }),
    );
    const tried = await cli(["workflows", "try", file, "--json"], dir);
    assert.equal(tried.code, 1, tried.err);
    const report = JSON.parse(tried.out);
    assert.deepEqual(report.problems.map((p: { kind: string }) => p.kind), ["base_changed"]);
    assert.ok(
      report.steps.some((s: { stepId: string; reached: boolean }) =>
        s.stepId === "licences" && s.reached
      ),
    );
    const validated = await cli(["workflows", "validate", file], dir);
    assert.equal(validated.code, 0, validated.err);
    assert.match(
      validated.out,
      /: ok \(team\.plus, overlay waymark\.code_review < team\.plus, 9 steps, sha256:[0-9a-f]{64}\)\nwarning \[OVERLAY_BASE_CHANGED\]/,
    );
    const inspected = await cli(["workflows", "inspect", "team.plus"], dir);
    assert.equal(inspected.code, 0, inspected.err);
    assert.match(
      inspected.out,
      /Layers \(base first\): waymark\.code_review \(bundled:[^)]+\) < team\.plus/,
    );
    assert.match(inspected.out, /changed: the overlay was written against sha256:2{64}/);
    assert.match(inspected.out, /- licences: team\.plus\n- review-tests: waymark\.code_review\n/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DeepWork jobs try clean: outputs named as the blocked answer names them, inputs given as a user would", async () => {
  const { tryTarget } = await import("../../cli/workflow_try.ts");
  const dir = await Deno.makeTempDir({ prefix: "waymark-try-jobs-" });
  try {
    const jobs = join(dir, ".deepwork", "jobs");
    for (const job of ["release_notes", "research"]) {
      await copyDir(join(FIXTURES, "..", "deepwork", "jobs", job), join(jobs, job));
    }
    for (const id of ["release_notes.full", "release_notes.quick", "research.deep"]) {
      const report = await tryTarget(id, { home: join(dir, "home"), workspace: dir });
      assert.ok(report?.ok, JSON.stringify(report?.problems ?? id));
      assert.ok(report.steps.length > 0 && report.steps.every((s) => s.reached));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyDir(join(from, e.name), join(to, e.name));
    else await Deno.copyFile(join(from, e.name), join(to, e.name));
  }
}
