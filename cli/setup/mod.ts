/**
 * `waymark setup --client NAME [--scope user|project] [--print] [--profile deepwork]`: puts
 * waymark's MCP server entry into the client's own configuration file (or prints it), merged
 * into what is there: other servers and settings are kept, a second run changes nothing, and a
 * file that does not parse is refused with its path. The entry starts this very waymark by
 * absolute paths (the Deno running it and its script, or the binary), so it works whatever
 * folder the client starts it from and whatever PATH the client has.
 * @module
 */
import { chmod, mkdir, readFile, realpath, rename, stat, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import {
  type Client,
  CLIENT_NAMES,
  CLIENTS,
  type Launch,
  type Place,
  type Scope,
} from "./clients.ts";
import { type Document, type Format, FORMATS, Malformed } from "./formats.ts";
import type { Flags } from "../flags.ts";
import type { CommandInput } from "../host.ts";

/** What `setup` reads from the process it runs in. */
export interface SetupHost {
  /** How this waymark was built (`binary` is started directly, the rest through Deno). */
  buildKind: string;
  /** Absolute path of the running executable (Deno, or the compiled binary). */
  execPath: string;
  /** The main module's URL (`file:` or `https:`). */
  mainModule: string;
  /** Where the client files are. */
  place: Place;
  /** Writes to stdout. */
  stdout(text: string): void;
  /** Writes to stderr. */
  stderr(text: string): void;
}

/** The server entry's name and extra arguments for each profile. */
const PROFILES = {
  default: { name: "waymark", args: [] },
  deepwork: { name: "deepwork", args: ["--profile", "deepwork"] },
} as const satisfies Record<NonNullable<Flags["profile"]>, { name: string; args: string[] }>;

/** How a client starts waymark, by how waymark was built. */
const LAUNCHERS = {
  binary: (host: SetupHost): Launch => ({ command: host.execPath, args: [] }),
  // --no-config: the client's working folder may hold a deno.json meant for something else
  script: (host: SetupHost): Launch => ({
    command: host.execPath,
    args: ["run", "-A", "--no-config", scriptLocation(host.mainModule)],
  }),
};

function scriptLocation(mainModule: string): string {
  return mainModule.startsWith("file:") ? fileURLToPath(mainModule) : mainModule;
}

/** The launch for this waymark with its flags: `serve`, the profile, and `--home` made absolute. */
function launchFor(host: SetupHost, flags: Flags): Launch {
  const base = LAUNCHERS[host.buildKind === "binary" ? "binary" : "script"](host);
  const home = flags.home ? ["--home", resolve(flags.home)] : [];
  return {
    command: base.command,
    args: [...base.args, "serve", ...PROFILES[flags.profile ?? "default"].args, ...home],
  };
}

/** Why the flags name no client configuration, and whether the usage helps. */
type Refusal = { refused: string; usage: boolean };

/** The client, scope and file the flags name, or why not. */
function target(
  host: SetupHost,
  flags: Flags,
): { client: Client; scope: Scope; file: string } | Refusal {
  // the flags' values were checked with the others (`../flags.ts`); one must be there
  if (!flags.client) {
    return { refused: `setup needs --client: ${CLIENT_NAMES.join(", ")}`, usage: true };
  }
  const client: Client = CLIENTS[flags.client];
  const scope = flags.scope ?? client.defaultScope;
  const fileAt = client.files[scope];
  if (!fileAt) {
    const refused =
      `${client.title} has no ${scope} configuration; use --scope ${client.defaultScope}`;
    return { refused, usage: false };
  }
  return { client, scope, file: fileAt(host.place) };
}

/** Runs `waymark setup`; its exit code (0 done, 1 refused, 2 usage). */
export async function setup(
  host: SetupHost,
  input: Pick<CommandInput, "flags" | "usage">,
): Promise<number> {
  const { flags } = input;
  const chosen = target(host, flags);
  if ("refused" in chosen) {
    host.stderr(`${chosen.refused}\n`);
    return chosen.usage ? input.usage() : 2;
  }
  const { client, scope, file } = chosen;
  const launch = launchFor(host, flags);
  const at = { key: client.serversKey, name: PROFILES[flags.profile ?? "default"].name };
  const entry = client.entry(launch);
  const format = FORMATS[client.format];
  if (flags.print) {
    host.stdout(format.snippet(at, entry));
    host.stderr(`(the entry for ${file}; nothing written)\n`);
    return 0;
  }
  const outcome = await merge(file, { format, at, entry });
  if (typeof outcome === "string") {
    host.stderr(`waymark setup: ${file}: ${outcome} (nothing was written)\n`);
    return 1;
  }
  host.stdout(`${describe(outcome, { file, name: at.name, title: client.title, scope })}\n`);
  if (/[\\/]_npx[\\/]/.test(launch.command)) {
    host.stderr(
      `note: the entry runs Deno from npx's cache (${launch.command}); ` +
        `\`npm install -g deno@${Deno.version.deno}\` gives it a lasting place, then run setup again with it\n`,
    );
  }
  return 0;
}

/** What a merge did. */
interface Merged {
  /** added, replaced or unchanged. */
  change: "added" | "replaced" | "unchanged";
  /** The entry it replaced. */
  previous?: unknown;
  /** The other servers in the file. */
  others: number;
}

/** Merges the entry into the file; a string says why the file was refused. */
async function merge(
  file: string,
  job: {
    format: Format;
    at: { key: string; name: string };
    entry: Document;
  },
): Promise<Merged | string> {
  const { format, at, entry } = job;
  const text = await readFile(file, "utf8").catch((error) => {
    if ((error as { code?: string }).code === "ENOENT") return "";
    throw error;
  });
  let before: Document;
  try {
    before = format.read(text);
  } catch (error) {
    if (error instanceof Malformed) {
      return `cannot be read: ${error.message}; fix or move the file and run again`;
    }
    throw error;
  }
  const servers = before[at.key] ?? {};
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    return `"${at.key}" is not a table of servers; fix or move the file and run again`;
  }
  const previous = (servers as Document)[at.name];
  const others = Object.keys(servers).filter((name) => name !== at.name).length;
  if (same(previous, entry)) return { change: "unchanged", others };
  const next = format.put(text, at, entry);
  if (!sameBesides(before, readBack(format, next), at, entry)) {
    return `its "${at.name}" entry is written in a form setup does not edit; remove that entry and run again`;
  }
  await writeAtomically(file, next);
  return { change: previous === undefined ? "added" : "replaced", previous, others };
}

function readBack(
  format: Format,
  text: string,
): Document | undefined {
  try {
    return format.read(text);
  } catch {
    return undefined;
  }
}

/** Whether `after` is `before` with the entry set and nothing else changed. */
function sameBesides(
  before: Document,
  after: Document | undefined,
  at: { key: string; name: string },
  entry: Document,
): boolean {
  if (!after) return false;
  const strip = (doc: Document) => {
    const servers = { ...(doc[at.key] as Document | undefined) };
    delete servers[at.name];
    return { ...doc, [at.key]: servers };
  };
  return same((after[at.key] as Document)[at.name], entry) && same(strip(after), strip(before));
}

/** Equal as data (a parser's objects may have no prototype; key order does not matter). */
function same(a: unknown, b: unknown): boolean {
  const plain = (value: unknown) => value === undefined ? value : JSON.parse(JSON.stringify(value));
  return isDeepStrictEqual(plain(a), plain(b));
}

/**
 * Writes beside the file and renames over it, keeping the file's permissions; a symbolic link
 * (a dotfiles repository's, say) stays a link, and the file it points at is the one replaced.
 */
async function writeAtomically(link: string, text: string): Promise<void> {
  const file = await realpath(link).catch(() => link);
  await mkdir(dirname(file), { recursive: true });
  const mode = await stat(file).then((s) => s.mode & 0o777, () => undefined);
  const temp = `${file}.waymark-${Deno.pid}.tmp`;
  await writeFile(temp, text, { mode: mode ?? 0o644 });
  if (mode !== undefined) await chmod(temp, mode);
  await rename(temp, file);
}

function describe(
  outcome: Merged,
  where: { file: string; name: string; title: string; scope: Scope },
): string {
  const kept = `${outcome.others} other server${outcome.others === 1 ? "" : "s"} kept`;
  const place = `${where.file} (${where.title}, ${where.scope})`;
  if (outcome.change === "unchanged") {
    return `"${where.name}" in ${place} is already this entry; nothing changed`;
  }
  const was = outcome.change === "replaced" ? `; it was ${JSON.stringify(outcome.previous)}` : "";
  return `${outcome.change} "${where.name}" in ${place}${was}; ${kept}.\n` +
    `Restart ${where.title} (or reload its MCP servers) to start it.`;
}

/** The host of the running process. */
export function processHost(buildKind: string, flags: Flags): SetupHost {
  return {
    buildKind,
    execPath: Deno.execPath(),
    mainModule: Deno.mainModule,
    place: {
      home: homeDir(),
      workspace: resolve(flags.workspace ?? process.cwd()),
      os: Deno.build.os,
      env: (name) => Deno.env.get(name),
    },
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  };
}

function homeDir(): string {
  const home = Deno.env.get(Deno.build.os === "windows" ? "USERPROFILE" : "HOME");
  if (!home) throw new Error("cannot tell the home folder (HOME is not set)");
  return home;
}
