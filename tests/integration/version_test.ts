/**
 * `waymark --version` names the build kind. Run from the checkout it says `source`; the bundle
 * (`single_file_test.ts`), the binary (`compile_test.ts`, where one can be built) and the npm package
 * (`tests/node/`, as `BUILD_KIND`) say theirs.
 */
import assert from "node:assert/strict";
import { MAIN } from "../helpers/server.ts";
import { BUILD_KIND, VERSION } from "../../mod.ts";

Deno.test("waymark --version from the checkout says `source`", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "--version"],
    stdout: "piped",
  }).output();
  assert.equal(out.code, 0);
  assert.equal(new TextDecoder().decode(out.stdout), `waymark ${VERSION} (source)\n`);
  assert.equal(BUILD_KIND, "source");
});
