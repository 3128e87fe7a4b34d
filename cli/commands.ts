/**
 * The command table: every command of `waymark`, written once ({@linkcode COMMANDS}). `main.ts`
 * dispatches through it ({@linkcode findCommand}, then the command's `run`) and the help is
 * derived from it (`help.ts`), so a command cannot be run without being in the help, or shown
 * in the help without running. Each command's code is in the commands loaded on demand
 * (`mod.ts`); this table is loaded at start-up and refers to them by type only.
 * @module
 */
import type { FlagName } from "./flags.ts";
import type { CommandInput } from "./host.ts";
import { load } from "../lazy.ts";

/** The commands loaded on demand (`../lazy.ts`). */
type Cli = typeof import("./mod.ts");

/** Loads the commands: a command that needs them calls it, one that does not never does. */
export type LoadCli = () => Promise<Cli>;

/** A command on the store: loaded from within the commands on first use. */
const onStore =
  (name: keyof typeof import("./store_commands.ts")) =>
  async (cli: LoadCli, input: CommandInput): Promise<number> =>
    (await (await cli()).storeCommands())[name](input);

/** The names of the commands' functions that run a command. */
type CliCommand = {
  [K in keyof Cli]: Cli[K] extends (input: CommandInput) => Promise<number> ? K : never;
}[keyof Cli];

/** A command of the commands (`mod.ts`), loaded first. */
const ofCli = (name: CliCommand) => async (cli: LoadCli, input: CommandInput): Promise<number> =>
  await ((await cli())[name] as (input: CommandInput) => Promise<number>)(input);

/** `waymark setup`: loads only itself (`setup/command.ts`), never the commands. */
const onSetup = async (_cli: LoadCli, input: CommandInput): Promise<number> =>
  await (await load<typeof import("./setup/command.ts")>("setup")).setup(input);

/** `waymark hook EVENT`: loads only the hook (`hook/mod.ts`), never the commands. */
const onHook = async (_cli: LoadCli, input: CommandInput): Promise<number> =>
  await (await load<typeof import("./hook/mod.ts")>("hook")).hook(input);

/** One command: how the help shows it, the flags it takes, and what runs it. */
export interface Command {
  /** Its forms: what follows its name, and what that does. */
  readonly forms: readonly (readonly [args: string, does: string])[];
  /** The flags it takes besides the common ones (`FLAGS`' `common`). */
  readonly flags?: readonly FlagName[];
  /** Runs it, loading what it needs (most commands: the commands, `cli`). */
  run(cli: LoadCli, input: CommandInput): Promise<number>;
}

/** A command with subcommands, such as `waymark sessions list`. */
export interface CommandGroup {
  /** The subcommands by name. */
  readonly subcommands: Readonly<Record<string, Command>>;
  /** The subcommand run when none is named. */
  readonly default?: string;
}

const json = ["json"] as const;

/** Every command, in the order the help lists them. */
export const COMMANDS: Readonly<Record<string, Command | CommandGroup>> = {
  serve: {
    forms: [
      ["", "serve MCP over stdio (the default command)"],
      ["--http PORT", "serve MCP over Streamable HTTP at http://127.0.0.1:PORT/mcp"],
      ["--viewer", "... and the read-only viewer beside it (URL logged to stderr)"],
      [
        "--http PORT --bind ADDR --auth-resource URL ...",
        "the team service: authenticated (docs/team_service.md)",
      ],
    ],
    flags: [
      "http",
      "bind",
      "auth-resource",
      "auth-issuer",
      "auth-jwks-url",
      "auth-scope",
      "auth-jwks-timeout",
      "personal-tokens",
      "stateless",
      "run-access",
      "tls-cert",
      "tls-key",
      "viewer",
      "viewer-port",
      "max-body-bytes",
      "max-sessions",
      "header-timeout",
      "body-timeout",
      "enable-start-session",
      "profile",
      "jobs-dir",
      "review-command",
      "external-runner",
      "no-quality-gate",
      "quality-gate-timeout",
      "quality-gate-max-attempts",
    ],
    run: ofCli("serve"),
  },
  view: {
    forms: [["", "serve the read-only session viewer on 127.0.0.1"]],
    flags: ["port", "header-timeout", "body-timeout"],
    run: ofCli("view"),
  },
  workflows: {
    default: "list",
    subcommands: {
      list: {
        forms: [["", "list workflows from every source"]],
        flags: json,
        run: ofCli("listWorkflows"),
      },
      inspect: {
        forms: [["ID", "show one workflow's steps"], ["ID --graph", "... as a Mermaid flowchart"]],
        flags: ["json", "graph"],
        run: ofCli("inspectWorkflow"),
      },
      validate: {
        forms: [["FILE...", "check workflow files and print each one's workflowHash"]],
        run: ofCli("validateWorkflow"),
      },
      new: {
        forms: [["ID [FILE]", "write a small valid workflow file to start from (with $schema)"]],
        run: ofCli("newWorkflow"),
      },
      try: {
        forms: [
          ["FILE|ID", "walk every path in memory with a scripted agent; report what fails"],
          ["--watch FILE", "... again on every save"],
        ],
        flags: ["json", "watch"],
        run: ofCli("tryWorkflowCommand"),
      },
      schema: {
        forms: [["", 'print the workflow files\' JSON Schema (for "$schema")']],
        run: ofCli("workflowSchema"),
      },
    },
  },
  review: {
    forms: [
      ["", "the review tasks of .deepreview rules for what git shows as changed"],
      ["--files FILE... | --files -", "... for these files (- reads them from stdin)"],
    ],
    flags: ["base-ref", "files", ...json],
    run: ofCli("review"),
  },
  keys: {
    subcommands: {
      rotate: {
        forms: [["", "new signing key; tokens signed by the previous one stay valid"]],
        run: ofCli("rotateKeys"),
      },
    },
  },
  setup: {
    forms: [["--client NAME", "add this waymark to an MCP client's configuration"]],
    flags: ["client", "scope", "print", "profile"],
    run: onSetup,
  },
  hook: {
    forms: [[
      "session-start",
      "for a host's session-start hook: the workspace's open runs and how to take them up " +
      "(hook JSON on stdin; always exits 0)",
    ]],
    run: onHook,
  },
  sessions: {
    default: "list",
    subcommands: {
      list: {
        forms: [["", "sessions, newest first"]],
        flags: ["status", ...json],
        run: onStore("listSessions"),
      },
      show: {
        forms: [["ID", "one session's runs, tips and latest notes (ID: ses_…, or a run's run_…)"]],
        flags: json,
        run: onStore("showSession"),
      },
      export: {
        forms: [
          ["ID", "a session (or a run's, by run_…) as one verified JSON bundle (default stdout)"],
          ["--all -o DIR", "one bundle per session"],
        ],
        flags: ["output", "all", "status", "older-than"],
        run: onStore("exportSessions"),
      },
    },
  },
  tokens: {
    default: "list",
    subcommands: {
      create: {
        forms: [["--name NAME", "a personal access token for serve --http, printed once"]],
        flags: ["name", "expires", "bot", "auth-scope", ...json],
        run: onStore("createToken"),
      },
      list: {
        forms: [["", "personal access tokens (never the tokens), newest first"]],
        flags: json,
        run: onStore("listTokens"),
      },
      revoke: {
        forms: [["ID", "refuse a personal access token from now on"]],
        flags: json,
        run: onStore("revokeToken"),
      },
    },
  },
  import: {
    forms: [["FILE...", "import bundles (verified first; never merges; twice is a no-op)"]],
    flags: json,
    run: onStore("importBundles"),
  },
  gc: {
    forms: [["--older-than 30d", "remove idle sessions"]],
    flags: ["older-than", "dry-run", "keep-running", "vacuum", ...json],
    run: onStore("gc"),
  },
  restore: {
    forms: [[
      "STATE_TOKEN [--dry-run] [--snapshot ID]",
      "put the files back as they were at that node (docs/snapshots.md)",
    ]],
    flags: ["dry-run", "snapshot", ...json],
    run: onStore("restore"),
  },
  doctor: {
    forms: [["[FILE]", "check the database, keyring and workflows"]],
    flags: ["repair", ...json],
    run: onStore("doctor"),
  },
  backup: {
    forms: [["FILE", "a consistent copy of the database while servers run"]],
    run: onStore("backup"),
  },
};

/** What a command line names. */
export type Found =
  | { kind: "command"; name: string; command: Command; args: string[] }
  | { kind: "group"; name: string; group: CommandGroup }
  | { kind: "unknown"; name: string };

/** Whether an entry of the table has subcommands. */
export function isGroup(entry: Command | CommandGroup): entry is CommandGroup {
  return "subcommands" in entry;
}

/**
 * The command `positionals` name (`serve` when none): a command and its arguments, a group
 * without one of its subcommands (a group named alone runs its default subcommand unless
 * `runDefault` is false), or a name that is no command.
 */
export function findCommand(
  positionals: readonly string[],
  options: { runDefault?: boolean } = {},
): Found {
  const [name = "serve", sub, ...rest] = positionals;
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name]! : undefined;
  if (!entry) return { kind: "unknown", name };
  if (!isGroup(entry)) return { kind: "command", name, command: entry, args: positionals.slice(1) };
  const chosen = sub ?? (options.runDefault === false ? undefined : entry.default);
  if (chosen === undefined || !Object.hasOwn(entry.subcommands, chosen)) {
    return { kind: "group", name, group: entry };
  }
  return {
    kind: "command",
    name: `${name} ${chosen}`,
    command: entry.subcommands[chosen]!,
    args: sub === undefined ? [] : rest,
  };
}
