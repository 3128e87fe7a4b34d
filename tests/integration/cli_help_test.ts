/**
 * `waymark --help`, `waymark COMMAND --help` and the refusals of a command line naming no
 * command, as a user sees them: printed by the real process before anything is opened.
 */
import assert from "node:assert/strict";
import { MAIN, tempHome } from "../helpers/server.ts";
import { FLAGS } from "../../cli/flags.ts";

async function run(args: string[]) {
  const ran = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: ran.code, out: text(ran.stdout), err: text(ran.stderr) };
}

const COMMAND_LINES = [
  "waymark serve",
  "waymark view",
  "waymark workflows list",
  "waymark workflows inspect ID",
  "waymark workflows validate FILE...",
  "waymark workflows schema",
  "waymark keys rotate",
  "waymark setup --client NAME",
  "waymark sessions list",
  "waymark sessions show ID",
  "waymark sessions export ID",
  "waymark import FILE",
  "waymark gc",
  "waymark doctor",
  "waymark backup FILE",
];

Deno.test("waymark --help shows every command, and every flag with what it does", async () => {
  const { code, out } = await run(["--help"]);
  assert.equal(code, 0);
  for (const line of COMMAND_LINES) assert.ok(out.includes(line), line);
  for (const flag of Object.keys(FLAGS)) {
    // a row of its own: the flag (its short form first), then what it does
    assert.match(out, new RegExp(`^  (-\\w, )?--${flag}(?![\\w-])`, "m"), `--${flag}`);
  }
});

Deno.test("waymark gc --help shows gc and the flags gc takes, and only those", async () => {
  const { code, out } = await run(["gc", "--help"]);
  assert.equal(code, 0);
  assert.match(out, /waymark gc --older-than/);
  for (const flag of ["--older-than", "--dry-run", "--keep-running", "--vacuum", "--json"]) {
    assert.ok(out.includes(flag), flag);
  }
  for (const other of ["--client", "--http", "waymark serve", "waymark sessions"]) {
    assert.ok(!out.includes(other), `${other} is not gc's`);
  }
});

Deno.test("a name that is no command, or a group without its subcommand, is refused with exit 2 and nothing opened", async () => {
  const home = await tempHome({ blank: true });
  try {
    const unknown = await run(["nosuch", "--home", home.home]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown command `nosuch`/);
    assert.match(unknown.err, /waymark sessions list/, "with the help");
    const keys = await run(["keys", "--home", home.home]);
    assert.equal(keys.code, 2);
    assert.match(keys.err, /^usage: waymark keys rotate$/m);
    const inspect = await run(["workflows", "inspect", "--home", home.home]);
    assert.equal(inspect.code, 2);
    assert.match(inspect.err, /^usage: waymark workflows inspect ID$/m);
    assert.deepEqual([...Deno.readDirSync(home.home)], [], "nothing was created");
  } finally {
    await home.cleanup();
  }
});
