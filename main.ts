/**
 * The `waymark` command: parses the flags (`cli/flags.ts`) and runs what the command table
 * (`cli/commands.ts`) names, or prints its help (`cli/help.ts`). `serve` over stdio (any profile,
 * no viewer; `cli/serve_early.ts`) answers its client's handshake and `tools/list` at once from the
 * profile's published face (`tools/profiles/registry.ts`) and loads the engine and the store
 * meanwhile (`tools/server/early_server.ts`); every other command loads what it needs, and none
 * loads the MCP SDK before it needs it: the commands (`cli/mod.ts`),
 * or, for `waymark hook`, the hook alone (`cli/hook/mod.ts`), which a host waits on. While
 * serving stdio, stdout carries JSON-RPC only; everything else
 * goes to stderr.
 * @module
 */
import { parseArgs } from "node:util";
import process from "node:process";
import type { WaymarkOptions, WaymarkServerOptions } from "./mod.ts";
import { VERSION } from "./version.ts";
import { type Environment, type Flags, parseArgsOptions, parseSettings } from "./cli/flags.ts";
import { findCommand } from "./cli/commands.ts";
import { flagMistake, helpFor, overallHelp, untakenFlags, usageText } from "./cli/help.ts";
import { load } from "./lazy.ts";
import { printErr, printOut } from "./cli/terminal.ts";
import { BUILD_KIND } from "./build.ts";

/** The commands (`cli/`), loaded on first use. */
const loadCli = () => load<typeof import("./cli/mod.ts")>("cli");

/** How this waymark was built (a compiled binary is the bundle, run standalone). */
const buildKind = (): string => Deno.build.standalone ? "binary" : BUILD_KIND;

function log(line: string): void {
  printErr(`[waymark] ${line}\n`);
}

function fatal(error: unknown): never {
  log(`fatal: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

/** Parsed and validated command line, or the exit code when it was refused. */
function commandLine(
  argv: string[],
): { flags: Flags; env: Environment; positionals: string[] } | number {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: parseArgsOptions() });
  } catch (error) {
    const unknown = (error as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION"
      ? unknownFlag(argv)
      : null;
    if (unknown) printErr(`${unknown}\n`);
    else printErr(`${(error as Error).message} (\`waymark --help\` lists the flags)\n`);
    return 2;
  }
  const settings = parseSettings(parsed.values, process.env);
  if (!settings.ok) {
    printErr(`${settings.message}\n(see waymark --help)\n`);
    return 2;
  }
  return { flags: settings.flags, env: settings.env, positionals: parsed.positionals };
}

/** What to say about the first flag in `argv` that waymark does not know, if any. */
function unknownFlag(argv: string[]): string | null {
  const { tokens, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: parseArgsOptions(),
    strict: false,
    tokens: true,
  });
  const known = parseArgsOptions();
  const typed = tokens.find((t) => t.kind === "option" && !Object.hasOwn(known, t.name));
  return typed?.kind === "option" ? flagMistake(typed.rawName, positionals) : null;
}

/** The MCP server's options from the flags and the environment. */
function serverOptions(flags: Flags, env: Environment): WaymarkServerOptions {
  return {
    log,
    enableStartSession: flags["enable-start-session"] === true ||
      env.WAYMARK_ENABLE_START_SESSION === true,
    profile: flags.profile ?? env.WAYMARK_PROFILE ?? "default",
    qualityGate: {
      enabled: flags["no-quality-gate"] !== true,
      reviewCommand: flags["review-command"],
      externalRunner: flags["external-runner"],
      timeoutSeconds: flags["quality-gate-timeout"],
      maxAttempts: flags["quality-gate-max-attempts"],
    },
  };
}

/** Where data lives and what to open, from the flags. */
function waymarkOptions(flags: Flags): WaymarkOptions {
  return {
    home: flags.home,
    dbUrl: flags.db,
    workspace: flags.workspace,
    extraWorkflowDirs: flags["workflows-dir"],
    busyTimeoutMs: flags["busy-timeout"],
    durability: flags.durability,
    jobDirs: flags["jobs-dir"],
  };
}

/**
 * What `waymark serve` with these arguments opens and serves, or the exit code when the command
 * line is refused; for tests that serve in-process what a `serve` process would.
 */
export function serveSettings(
  argv: string[],
): { options: WaymarkOptions; server: WaymarkServerOptions } | number {
  const line = commandLine(argv);
  if (typeof line === "number") return line;
  return { options: waymarkOptions(line.flags), server: serverOptions(line.flags, line.env) };
}

/**
 * Runs the command the command table finds (`cli/commands.ts`): its help, or its code from the
 * commands loaded on demand, but plain `serve` over stdio, which answers early.
 */
async function main(argv: string[]): Promise<number> {
  const line = commandLine(argv);
  if (typeof line === "number") return line;
  const { flags, env, positionals } = line;
  if (flags.help) {
    printOut(helpFor(positionals));
    return 0;
  }
  if (flags.version) {
    // a compiled binary runs the bundle, and only the runtime knows it is standalone
    printOut(`waymark ${VERSION} (${buildKind()})\n`);
    return 0;
  }
  const found = findCommand(positionals);
  if (found.kind === "unknown") {
    printErr(`unknown command \`${found.name}\`\n\n${overallHelp()}`);
    return 2;
  }
  if (found.kind === "group") {
    printErr(usageText(found));
    return 2;
  }
  const [untaken] = untakenFlags(found.command, flags);
  if (untaken) {
    printErr(`${flagMistake(`--${untaken}`, positionals)}\n`);
    return 2;
  }
  const options = waymarkOptions(flags);
  const server = serverOptions(flags, env);
  const plainStdio = flags.http === undefined && flags.viewer !== true;
  if (found.name === "serve" && plainStdio) {
    const { serveEarly } = await load<typeof import("./cli/serve_early.ts")>("serveEarly");
    return await serveEarly(options, server);
  }
  // every command that loads the commands says first when the home is no folder (the hook, which
  // loads only itself, never fails its host)
  const loadChecked = async () => {
    const cli = await loadCli();
    await cli.checkHome(options);
    return cli;
  };
  return await found.command.run(loadChecked, {
    options,
    flags,
    args: found.args,
    server,
    buildKind: buildKind(),
    usage: () => {
      printErr(usageText(found));
      return 2;
    },
  }).catch(async (error) => (await loadCli()).commandFailed(error, options));
}

if (import.meta.main) {
  main(process.argv.slice(2)).then((code) => process.exit(code), fatal);
}
