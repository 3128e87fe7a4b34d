/**
 * The command table is the one list of commands: the help shows every command and every flag,
 * every command the help shows is one the dispatch finds, and every command the dispatch finds
 * runs a function the loaded commands have; and the parser reads each flag as its schema does.
 */
import assert from "node:assert/strict";
import { type Command, COMMANDS, findCommand, isGroup } from "../../cli/commands.ts";
import { z } from "npm:zod@4.6.7";
import { type FlagName, FLAGS, parseArgsOptions, parseSettings } from "../../cli/flags.ts";
import { helpFor, overallHelp, usageText } from "../../cli/help.ts";
import * as cli from "../../cli/mod.ts";
import type { CommandInput } from "../../cli/host.ts";

/** Every command of the table by its full name (`sessions list`). */
function tableCommands(): Map<string, Command> {
  const out = new Map<string, Command>();
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (!isGroup(entry)) out.set(name, entry);
    else for (const [sub, c] of Object.entries(entry.subcommands)) out.set(`${name} ${sub}`, c);
  }
  return out;
}

/** The commands the help's Usage section names: the words after `waymark` up to the arguments. */
function helpCommands(help: string): Set<string> {
  const usage = help.slice(help.indexOf("Usage:"), help.indexOf("Options:"));
  const named = new Set<string>();
  for (const line of usage.split("\n").filter((l) => l.startsWith("  waymark "))) {
    const words = line.trim().split(/\s{2,}/)[0]!.split(" ").slice(1);
    const end = words.findIndex((w) => !/^[a-z]+$/.test(w));
    const path = end < 0 ? words : words.slice(0, end);
    if (path.length > 0) named.add(path.join(" "));
  }
  return named;
}

const ALL_FLAGS = Object.keys(FLAGS) as FlagName[];
const isCommon = (f: FlagName) => (FLAGS[f] as { common?: true }).common === true;

Deno.test("the help names exactly the commands the dispatch finds", () => {
  const table = tableCommands();
  const shown = helpCommands(overallHelp());
  assert.deepEqual([...shown].sort(), [...table.keys()].sort());
  for (const name of shown) {
    const found = findCommand(name.split(" "));
    assert.equal(found.kind, "command", name);
    assert.equal(found.kind === "command" && found.name, name);
  }
  assert.equal(findCommand(["nosuch"]).kind, "unknown");
  assert.equal(findCommand(["toString"]).kind, "unknown", "no name from Object's prototype");
  assert.equal(findCommand(["keys"]).kind, "group");
  const bare = findCommand([]);
  assert.equal(bare.kind === "command" && bare.name, "serve", "no command is serve");
});

Deno.test("every flag is in the help, and every flag is common or taken by a command", () => {
  const help = overallHelp();
  const taken = new Set([...tableCommands().values()].flatMap((c) => c.flags ?? []));
  for (const flag of ALL_FLAGS) {
    assert.match(help, new RegExp(`(^|\\s)--${flag}(?![\\w-])`), `--${flag} in the help`);
    assert.ok(isCommon(flag) || taken.has(flag), `--${flag} is taken by no command`);
    const short = (FLAGS[flag] as { short?: string }).short;
    if (short) assert.ok(help.includes(`-${short}, --${flag}`), `-${short} in the help`);
  }
  assert.deepEqual(Object.keys(parseArgsOptions()).sort(), [...ALL_FLAGS].sort());
});

Deno.test("the parser's table agrees with each flag's schema: a switch is a boolean, a repeatable flag an array", () => {
  const options = parseArgsOptions();
  for (const flag of ALL_FLAGS) {
    const schema = FLAGS[flag].schema(`--${flag}`);
    const isSwitch = schema instanceof z.ZodBoolean;
    assert.equal(options[flag]!.type, isSwitch ? "boolean" : "string", `--${flag}'s type`);
    assert.equal(
      options[flag]!.multiple === true,
      schema instanceof z.ZodArray,
      `--${flag} repeats`,
    );
    assert.equal((FLAGS[flag] as { value?: string }).value === undefined, isSwitch, `--${flag}`);
  }
});

Deno.test("flags are checked by their own schemas: bad values are named, unknown keys ignored", () => {
  const ok = parseSettings({ home: "/h", json: true, files: ["a", "b"], port: "8080" }, {});
  assert.ok(ok.ok);
  assert.deepEqual(ok.flags, { home: "/h", json: true, files: ["a", "b"], port: 8080 });
  const unknown = parseSettings({ home: "/h", nosuch: "x" }, {});
  assert.deepEqual(unknown.ok && unknown.flags, { home: "/h" });
  const bad = parseSettings({ port: "80x", "busy-timeout": "-1", home: "" }, {
    WAYMARK_PROFILE: "x",
  });
  assert.ok(!bad.ok);
  for (const name of ["--port", "--busy-timeout", "--home", "WAYMARK_PROFILE"]) {
    assert.match(bad.message, new RegExp(name), `${name} is named`);
  }
});

Deno.test("each command's help shows its forms and its flags, and no other command's", () => {
  for (const [name, command] of tableCommands()) {
    const help = helpFor(name.split(" "));
    for (const [args, does] of command.forms) {
      assert.ok(help.includes(`waymark ${name}${args ? ` ${args}` : ""}`), `${name}: ${args}`);
      assert.ok(help.includes(does.split(" ").slice(0, 3).join(" ")), `${name}: ${does}`);
    }
    for (const flag of ALL_FLAGS) {
      const mentioned = new RegExp(`(^|\\s)--${flag}(?![\\w-])`).test(help);
      if (command.flags?.includes(flag) || isCommon(flag)) {
        assert.ok(mentioned, `${name} --help shows --${flag}`);
      } else if (!command.forms.some(([args]) => args.includes(`--${flag}`))) {
        assert.ok(
          !new RegExp(`^\\s+(-\\w, )?--${flag}(?![\\w-])`, "m").test(help),
          `${name}: --${flag}`,
        );
      }
    }
    const found = findCommand(name.split(" "));
    assert.ok(found.kind === "command");
    assert.match(usageText(found), new RegExp(`^usage: waymark ${name}`));
  }
});

Deno.test("a flag a command's forms spell out is one the command takes", () => {
  const shorts = new Map(
    ALL_FLAGS.flatMap((f) => {
      const short = (FLAGS[f] as { short?: string }).short;
      return short ? [[short, f] as const] : [];
    }),
  );
  for (const [name, command] of tableCommands()) {
    for (const [args] of command.forms) {
      for (const [, long, short] of args.matchAll(/(?:^|\s)(?:--([a-z-]+)|-([a-z]))\b/g)) {
        const flag = (long ?? shorts.get(short!)) as FlagName;
        assert.ok(flag in FLAGS, `${name}: ${args} names no flag`);
        assert.ok(command.flags?.includes(flag), `${name} does not take --${flag}`);
      }
    }
  }
});

Deno.test("every command in the table runs a function of the loaded commands", async () => {
  // the modules a command's code may be in: the commands, and those they load on first use
  const modules: Record<string, Record<string, unknown>> = {
    cli: cli as Record<string, unknown>,
    storeCommands: await import("../../cli/store_commands.ts"),
  };
  // `hook` and `setup` load their own modules, never the commands
  const ownModules: Record<string, Record<string, unknown>> = {
    hook: await import("../../cli/hook/mod.ts"),
    setup: await import("../../cli/setup/command.ts"),
  };
  for (const [name, command] of tableCommands()) {
    const called: string[] = [];
    // stands in for each module: records each function called, and answers with itself
    const recorder: unknown = new Proxy({}, {
      get: (_target, property) =>
        property === "then" ? undefined : () => {
          called.push(String(property));
          return Promise.resolve(recorder);
        },
    });
    // (the hook answers an unknown event with 0; setup without --client, its usage: 0 here)
    const input = {
      args: ["--help-never-an-event"],
      flags: {},
      options: {},
      usage: () => 0,
    } as unknown as CommandInput;
    let loadedCli = false;
    const code = await command.run(() => {
      loadedCli = true;
      return Promise.resolve(recorder as typeof cli);
    }, input);
    const own = ownModules[name];
    if (own) {
      assert.equal(loadedCli, false, `${name} loaded the commands`);
      assert.equal(code, 0);
      assert.equal(typeof own[name], "function");
      continue;
    }
    const runs = called.at(-1)!;
    const loaders = called.slice(0, -1);
    const module = modules[loaders[0] ?? "cli"];
    assert.ok(loaders.length <= 1 && module, `${name}: ${called.join(" → ")}`);
    if (loaders.length === 1) assert.equal(typeof modules.cli![loaders[0]!], "function");
    assert.equal(typeof module![runs], "function", `${name} runs ${called.join(" → ")}`);
  }
});
