/**
 * Every flag and environment variable is validated by one schema: a bad value stops the command
 * with exit code 2 and a line naming the flag, before anything is opened.
 */
import assert from "node:assert/strict";
import { MAIN, tempHome } from "../helpers/server.ts";

async function run(args: string[], env: Record<string, string> = {}) {
  const ran = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).output();
  return { code: ran.code, err: new TextDecoder().decode(ran.stderr) };
}

Deno.test("cli: bad flag values are refused with the flag's name, never NaN", async () => {
  const home = await tempHome({ blank: true });
  try {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["serve", "--busy-timeout", "abc"], {}, /--busy-timeout must be a whole number/],
      [["serve", "--durability", "always"], {}, /--durability must be normal or full/],
      [["serve", "--http", "70000"], {}, /--http must be a port number/],
      [["view", "--port", "x1"], {}, /--port must be a port number/],
      [["serve", "--db", "ftp://nope"], {}, /--db must be file:PATH/],
      [
        ["gc", "--older-than", "30 days"],
        {},
        /--older-than must be a positive whole number \(1 or more\) and a unit/,
      ],
      [["sessions", "list", "--status", "paused"], {}, /--status must be one of running, complete/],
      [
        ["serve"],
        { WAYMARK_ENABLE_START_SESSION: "maybe" },
        /WAYMARK_ENABLE_START_SESSION must be/,
      ],
    ];
    for (const [args, env, message] of cases) {
      const { code, err } = await run([...args, "--home", home.home], env);
      assert.equal(code, 2, `${args.join(" ")}: ${err}`);
      assert.match(err, message);
      assert.match(err, /\(got /);
    }
    const entries = [...Deno.readDirSync(home.home)];
    assert.deepEqual(entries, [], "nothing was created for a refused command");
  } finally {
    await home.cleanup();
  }
});
