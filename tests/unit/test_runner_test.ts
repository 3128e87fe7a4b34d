/**
 * `deno task test`'s own decisions (`scripts/test.ts`, `scripts/test_groups.ts`): which files
 * start first and which share a worker, how the slowest files are read from Deno's JUnit report,
 * and that its type check is `deno task check`'s.
 * @module
 */
import assert from "node:assert/strict";
import { checkArgs, fileTimes, ordered } from "../../scripts/test.ts";
import { groupName, groups, writeGroups } from "../../scripts/test_groups.ts";

Deno.test("the slow folders start first, each in name order, the rest after", () => {
  assert.deepEqual(
    ordered([
      "tests/unit/b_test.ts",
      "tests/integration/z_test.ts",
      "tests/hosts/b_test.ts",
      "tests/integration/a_test.ts",
      "tests/hosts/a_test.ts",
      "tests/store/a_test.ts",
    ]),
    [
      "tests/hosts/a_test.ts",
      "tests/hosts/b_test.ts",
      "tests/integration/a_test.ts",
      "tests/integration/z_test.ts",
      "tests/store/a_test.ts",
      "tests/unit/b_test.ts",
    ],
  );
});

Deno.test("a file's time is its tests' times; steps are inside them and not counted again", () => {
  const junit = [
    `<testcase name="walk" classname="./tests/a_test.ts" time="2.5">`,
    `<testcase name="walk &gt; step one" classname="./tests/a_test.ts" time="2.0">`,
    `<testcase name="fork" classname="./tests/a_test.ts" time="1.0">`,
    `<testcase name="one" classname="./tests/b_test.ts" time="4.0">`,
  ].join("\n");
  assert.deepEqual(fileTimes(junit), [
    { file: "./tests/b_test.ts", seconds: 4 },
    { file: "./tests/a_test.ts", seconds: 3.5 },
  ]);
});

Deno.test("the run's type check is deno task check's, and it covers the tests", async () => {
  const args = await checkArgs();
  assert.equal(args[0], "check");
  assert.ok(args.includes("tests/"), `deno task check does not check tests/: ${args.join(" ")}`);
  assert.ok(args.includes("main.ts") && args.includes("mod.ts"), args.join(" "));
});

Deno.test("files of a grouped folder share workers, in order; a worker-wide switch only with its kind", () => {
  const file = (path: string, source = "") => ({ path, source });
  const integration = Array.from({ length: 8 }, (_, i) => file(`tests/integration/f${i}_test.ts`));
  integration[2] = file("tests/integration/f2_test.ts", "import x;\nserveAsProcesses();\n");
  integration[7] = file("tests/integration/f7_test.ts", "serveAsProcesses();\n");
  const units = groups([
    file("tests/hosts/a_test.ts"),
    file("tests/hosts/b_test.ts"),
    ...integration,
    file("tests/postgres/p_test.ts", "if (ok) {\n  testOnPostgres();\n}\n"),
    file("tests/unit/u0_test.ts"),
    file("tests/unit/u1_test.ts"),
  ], { sizes: [["tests/integration/", 6], ["tests/unit/", 25]] });
  assert.deepEqual(units, [
    ["tests/hosts/a_test.ts"],
    ["tests/hosts/b_test.ts"],
    [0, 1, 3, 4, 5, 6].map((i) => `tests/integration/f${i}_test.ts`),
    ["tests/integration/f2_test.ts", "tests/integration/f7_test.ts"],
    ["tests/postgres/p_test.ts"],
    ["tests/unit/u0_test.ts", "tests/unit/u1_test.ts"],
  ]);
  assert.equal(
    groupName(units[2]!, 2),
    "02_integration_f0..f6_test.ts",
  );
});

Deno.test("a group runs its files' tests in one worker, and the report names each test's own file", async () => {
  const root = await Deno.makeTempDir({ prefix: "waymark-groups-" });
  try {
    await Deno.mkdir(`${root}/tests/unit`, { recursive: true });
    await Deno.mkdir(`${root}/groups`);
    // b's second test passes only where a's module was loaded: the same worker
    const marks = {
      a: `Object.assign(globalThis, { groupMark: "a" });\n`,
      b: `if (Reflect.get(globalThis, "groupMark") !== "a") throw new Error("another worker");\n`,
    };
    for (const [name, mark] of Object.entries(marks)) {
      await Deno.writeTextFile(
        `${root}/tests/unit/${name}_test.ts`,
        `Deno.test("${name} one", () => {});\nDeno.test("${name} two", () => {\n${mark}});\n`,
      );
    }
    const targets = await writeGroups([["tests/unit/a_test.ts", "tests/unit/b_test.ts"]], {
      root,
      dir: `${root}/groups`,
    });
    assert.equal(targets.length, 1);
    assert.ok(targets[0]!.startsWith(`${root}/groups/`), targets[0]);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "--no-check", "--no-config", `--junit-path=${root}/junit.xml`, ...targets],
      cwd: root,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const times = fileTimes(await Deno.readTextFile(`${root}/junit.xml`));
    assert.deepEqual(times.map((t) => t.file).sort(), [
      "./tests/unit/a_test.ts",
      "./tests/unit/b_test.ts",
    ]);
    assert.match(
      new TextDecoder().decode(out.stdout),
      /running 4 tests from .*00_unit_a\.\.b_test\.ts/,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
