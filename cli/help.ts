/**
 * `waymark --help`, `waymark COMMAND --help` and the usage a command prints when its arguments
 * are wrong, all derived from the command table (`commands.ts`) and the flags (`flags.ts`):
 * the commands, their forms, which command takes which flag and what each flag does.
 * @module
 */
import { VERSION } from "../version.ts";
import {
  type Command,
  type CommandGroup,
  COMMANDS,
  findCommand,
  type Found,
  isGroup,
} from "./commands.ts";
import { type FlagName, FLAGS } from "./flags.ts";

/** Columns the help is wrapped to. */
const WIDTH = 100;

/** `words` wrapped to {@linkcode WIDTH}, each line after the first indented by `indent`. */
function wrap(words: string, indent: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of words.split(" ")) {
    if (line && indent + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

/** A two-column row: `left` padded to `column`, or on its own line when it is wider. */
function row(left: string, right: string, column: number): string {
  const head = `  ${left}`;
  const gap = head.length < column ? " ".repeat(column - head.length) : `\n${" ".repeat(column)}`;
  return `${head}${gap}${wrap(right, column)}\n`;
}

/** Every command by its full name (`sessions list`), in the table's order. */
function commands(): [string, Command][] {
  return Object.entries(COMMANDS).flatMap(([name, entry]) =>
    isGroup(entry)
      ? Object.entries(entry.subcommands).map(([sub, c]) =>
        [`${name} ${sub}`, c] as [string, Command]
      )
      : [[name, entry] as [string, Command]]
  );
}

/** Which of `among` take `flag` (none for a common flag). */
function takers(flag: FlagName, among: [string, Command][]): string[] {
  return among.filter(([, c]) => c.flags?.includes(flag)).map(([name]) => name);
}

const USAGE_COLUMN = 35;
const FLAG_COLUMN = 24;

function formRows(name: string, command: Command): string {
  return command.forms.map(([args, does]) =>
    row(`waymark ${name}${args ? ` ${args}` : ""}`, does, USAGE_COLUMN)
  ).join("");
}

/** A flag's row, saying which of `among` take it when there is more than one. */
function flagRow(flag: FlagName, among: [string, Command][]): string {
  const spec: { value?: string; short?: string; help: string } = FLAGS[flag];
  const label = `${spec.short ? `-${spec.short}, ` : ""}--${flag}${
    spec.value ? ` ${spec.value}` : ""
  }`;
  const by = among.length > 1 ? takers(flag, among) : [];
  return row(label, `${by.length > 0 ? `(${by.join(", ")}) ` : ""}${spec.help}`, FLAG_COLUMN);
}

const COMMON = (Object.keys(FLAGS) as FlagName[]).filter((f) =>
  (FLAGS[f] as { common?: true }).common
);

/** The whole help: every command and every flag. */
export function overallHelp(): string {
  const usage = commands().map(([name, command]) => formRows(name, command)).join("");
  const flags = (Object.keys(FLAGS) as FlagName[]).map((f) => flagRow(f, commands())).join("");
  return `waymark ${VERSION}: a rewind-safe workflow runtime for AI coding agents, over MCP.

Usage:
${usage}${
    row("waymark --version | --help", "(and waymark COMMAND --help: one command's)", USAGE_COLUMN)
  }
Options:
${flags}
<home>/config.json (optional, JSONC):
  {"workflowDirs": [...], "preferences": {...}, "retention": {"olderThan": "90d"}, "jobDirs": [...]}
`;
}

/** The commands a found name stands for, by full name. */
function named(found: Exclude<Found, { kind: "unknown" }>): [string, Command][] {
  if (found.kind === "command") return [[found.name, found.command]];
  const group: CommandGroup = found.group;
  return Object.entries(group.subcommands).map(([sub, c]) => [`${found.name} ${sub}`, c]);
}

/**
 * `waymark [COMMAND...] --help`: the whole help, or one command's (a group's: each of its
 * subcommands) with the flags it takes.
 */
export function helpFor(positionals: readonly string[]): string {
  // a group named alone is all of it, not the subcommand it runs by default
  const found = findCommand(positionals, { runDefault: false });
  if (positionals.length === 0 || found.kind === "unknown") return overallHelp();
  const shown = named(found);
  const own = [...new Set(shown.flatMap(([, c]) => c.flags ?? []))];
  const options = own.length > 0 ? `\nOptions:\n${own.map((f) => flagRow(f, shown)).join("")}` : "";
  const common = COMMON.map((f) => `--${f}`).join(", ");
  return `Usage:\n${shown.map(([name, c]) => formRows(name, c)).join("")}${options}\n${
    wrap(`Common options: ${common} (waymark --help says what each does).`, 0)
  }\n`;
}

/** What a command prints when its arguments are wrong: its forms, and where to read more. */
export function usageText(found: Exclude<Found, { kind: "unknown" }>): string {
  const forms = named(found).flatMap(([name, c]) =>
    c.forms.map(([args]) => `waymark ${name}${args ? ` ${args}` : ""}`)
  );
  return `usage: ${forms.join("\n       ")}\n(waymark ${found.name} --help says more)\n`;
}

/** The edit distance between two words (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let above = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const here = [i];
    for (let j = 1; j <= b.length; j++) {
      here[j] = Math.min(
        above[j]! + 1,
        here[j - 1]! + 1,
        above[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    above = here;
  }
  return above[b.length]!;
}

/** The flag of `known` nearest to `typed`, when it is near enough to be a slip of the keys. */
function nearest(typed: string, known: readonly string[]): string | null {
  let best: { flag: string; d: number } | null = null;
  for (const flag of known) {
    const d = distance(typed, flag);
    if (d > 0 && (!best || d < best.d)) best = { flag, d };
  }
  return best && best.d <= Math.max(2, Math.floor(typed.length / 3)) ? best.flag : null;
}

/**
 * What the command line says about a flag that `positionals`' command does not take: one waymark
 * does not know (`--viewr`), or one of another command's. Names the command, the nearest of its
 * own flags (`did you mean --viewer?`) and where its flags are listed.
 */
export function flagMistake(typed: string, positionals: readonly string[]): string {
  const found = findCommand(positionals);
  const command = found.kind === "command" ? found : null;
  const name = typed.replace(/^-+/, "").split("=")[0]!;
  const known: string[] = command ? [...COMMON, ...(command.command.flags ?? [])] : [
    ...Object.keys(FLAGS),
  ];
  const which = command ? `waymark ${command.name}` : "waymark";
  const head = Object.hasOwn(FLAGS, name) && command
    ? `\`${which}\` does not take --${name}`
    : `unknown flag ${typed.split("=")[0]}${command ? ` for \`${which}\`` : ""}`;
  // a one-letter flag is no misspelt word
  const guess = /^-[^-]/.test(typed) ? null : nearest(name, known);
  return `${head}${
    guess ? `; did you mean --${guess}?` : ""
  } (\`${which} --help\` lists its flags)`;
}

/** The flags set in `flags` that `command` takes neither as its own nor as a common one. */
export function untakenFlags(command: Command, flags: Record<string, unknown>): string[] {
  const takes = new Set<string>([...COMMON, ...(command.flags ?? [])]);
  return Object.keys(flags).filter((f) => flags[f] !== undefined && !takes.has(f));
}
