/**
 * `deno task test`'s own decisions (`scripts/test.ts`): which files start first, how the slowest
 * files are read from Deno's JUnit report, and that its type check is `deno task check`'s.
 * @module
 */
import assert from "node:assert/strict";
import { checkArgs, fileTimes, ordered } from "../../scripts/test.ts";

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
