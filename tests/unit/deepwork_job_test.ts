/**
 * `job.yml` to compiled workflows, pure: both formats, the problems each reports, pinning (an
 * instruction file's text is inside the hash), and the output checks shared by both profiles.
 */
import assert from "node:assert/strict";
import { loadJob } from "../../engine/deepwork/job_catalog.ts";
import { instructionFiles, OUTPUT_SYNTAX } from "../../engine/deepwork/job.ts";
import { outputsProblem } from "../../engine/deepwork/outputs.ts";
import { parseJobYaml } from "../../engine/deepwork/parse.ts";

const LIST = `
name: demo
summary: A demo
steps:
  - id: a
    name: A
    instructions_file: a.md
    outputs:
      out.md: {type: file, description: d}
  - id: b
    name: B
    instructions: Do B.
workflows:
  - name: w
    steps: [a, b]
`;

async function parsed(text: string) {
  const result = await parseJobYaml(text);
  if (!result.ok) assert.fail(result.error.message);
  return result.job;
}

async function problem(text: string): Promise<string> {
  const result = await parseJobYaml(text);
  assert.ok(!result.ok, "expected a problem");
  return result.error.message;
}

Deno.test("the step-list format: instruction files named, outputs required by default", async () => {
  const job = await parsed(LIST);
  assert.equal(job.format, "step_list");
  assert.deepEqual(instructionFiles(job), ["a.md"]);
  const [first] = job.workflows[0]!.entries[0]!;
  assert.deepEqual(first!.outputs, [
    { name: "out.md", type: "file", description: "d", required: true },
  ]);
});

Deno.test("each format reports what is wrong, and where", async () => {
  assert.match(await problem("name: x\nsummary: [\n"), /YAML syntax error/);
  assert.match(await problem("- a\n- b\n"), /must be a mapping/);
  assert.match(
    await problem(LIST.replace("steps: [a, b]", "steps: [a, c]")),
    /workflows\[0\]\.steps\[1\]: unknown step `c`; steps: a, b/,
  );
  assert.match(await problem(LIST.replace("    instructions: Do B.\n", "")), /instructions_file/);
  assert.match(
    await problem(LIST.replace("name: demo", "name: no spaces")),
    /name: the job name must be/,
  );
  const map = `
name: m
step_arguments:
  - {name: x, type: string}
workflows:
  w:
    steps:
      - name: s
        instructions: go
        sub_workflow: {workflow_name: other}
`;
  assert.match(await problem(map), /either `instructions` or `sub_workflow`/);
  assert.match(
    await problem(
      map.replace("        sub_workflow: {workflow_name: other}\n", "        outputs: {y: {}}\n"),
    ),
    /outputs: unknown step argument `y`; step_arguments: x/,
  );
});

Deno.test("a job's hash pins its instruction files; a missing one fails the job", async () => {
  const job = await parsed(LIST);
  const at = (text: string | null) => ({
    dir: "/jobs/demo",
    source: "project" as const,
    instructions: new Map([["a.md", text]]),
  });
  const one = await loadJob(job, at("Do A."));
  const same = await loadJob(await parsed(LIST), at("Do A."));
  const other = await loadJob(job, at("Do A differently."));
  assert.ok(one.ok && same.ok && other.ok);
  assert.equal(one.job.workflows[0]!.hash, same.job.workflows[0]!.hash);
  assert.notEqual(one.job.workflows[0]!.hash, other.job.workflows[0]!.hash);
  assert.equal(one.job.workflows[0]!.compiled.id, "demo.w");
  const missing = await loadJob(job, at(null));
  assert.ok(!missing.ok);
  assert.match(missing.error.error, /instruction file\(s\) not found in the job folder: a\.md/);
});

Deno.test("output checks: names, requirements and types, in that order", () => {
  const specs = [
    { name: "f", type: "file" as const, description: "", required: true },
    { name: "fs", type: "files" as const, description: "", required: false },
    { name: "either", type: "file_path" as const, description: "", required: false },
  ];
  assert.equal(outputsProblem(specs, { f: "a", either: ["b", "c"] }, "s"), null);
  assert.equal(outputsProblem(specs, { f: "a", either: "b" }, "s"), null);
  assert.match(outputsProblem(specs, { g: 1 }, "s")!, /Unknown output name\(s\) `g`/);
  assert.match(outputsProblem(specs, {}, "s")!, /Missing required output\(s\) `f`/);
  assert.match(outputsProblem(specs, { f: "a", fs: "b" }, "s")!, /`fs`.*got a string/);
  assert.match(outputsProblem(specs, { f: "a", either: 3 }, "s")!, /`either`.*got a number/);
  assert.equal(OUTPUT_SYNTAX.file, "filepath");
  assert.equal(OUTPUT_SYNTAX.files, "array of filepaths for all individual files");
});
