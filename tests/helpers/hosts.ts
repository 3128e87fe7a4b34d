/**
 * The real hosts the host tests drive (Claude Code and Gemini CLI from npm), installed into a
 * cache folder outside the repository with pinned versions and without npm install scripts.
 *
 * Claude Code's wrapper package links its native binary from an optional platform package in an
 * install script; with scripts off the binary is taken from the platform package directly.
 * Gemini CLI is one bundled JavaScript file run by Node; its optional native parts (a pty, a
 * keychain) are left out and it falls back without them.
 *
 * `deno run -A tests/helpers/hosts.ts install` installs both (`.ci/run` calls it); it is
 * idempotent and returns at once when both are there. Outside CI a missing host makes the host
 * tests ignored with one line saying how to install it; in CI (`CI=true`) it fails them.
 * @module
 */
import { join } from "node:path";

/** The pinned host versions: one place, read by the install and by the tests. */
export const HOST_VERSIONS = {
  claude: "2.1.328",
  gemini: "0.61.0",
} as const;

/** A host the tests can drive. */
export type HostName = keyof typeof HOST_VERSIONS;

/** Whether this runs in CI, where a missing host is a failure. */
export const IN_CI: boolean = /^(true|1)$/i.test(Deno.env.get("CI") ?? "");

const INSTALL_HINT = "deno run -A tests/helpers/hosts.ts install";

/** The cache folder hosts are installed into (`WAYMARK_HOSTS_DIR`, else ~/.cache/waymark-hosts). */
export function hostsDir(): string {
  const set = Deno.env.get("WAYMARK_HOSTS_DIR");
  if (set) return set;
  const home = Deno.env.get("HOME") ?? Deno.cwd();
  return join(home, ".cache", "waymark-hosts");
}

/** Claude Code's platform package for this machine (the one holding the native binary). */
function claudePlatformPackage(): string {
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  const os = Deno.build.os === "darwin"
    ? "darwin"
    : Deno.build.os === "windows"
    ? "win32"
    : "linux";
  const musl = os === "linux" && exists(`/lib/ld-musl-${Deno.build.arch}.so.1`);
  return `@anthropic-ai/claude-code-${os}-${arch}${musl ? "-musl" : ""}`;
}

/** What to install for each host and where its executable ends up inside the prefix. */
const PLANS: Record<HostName, { packages: () => string[]; bin: () => string }> = {
  claude: {
    packages: () => [
      `@anthropic-ai/claude-code@${HOST_VERSIONS.claude}`,
      `${claudePlatformPackage()}@${HOST_VERSIONS.claude}`,
    ],
    bin: () =>
      join(
        "node_modules",
        claudePlatformPackage(),
        Deno.build.os === "windows" ? "claude.exe" : "claude",
      ),
  },
  gemini: {
    packages: () => [`@google/gemini-cli@${HOST_VERSIONS.gemini}`],
    bin: () => join("node_modules", "@google", "gemini-cli", "bundle", "gemini.js"),
  },
};

function prefix(host: HostName): string {
  return join(hostsDir(), `${host}-${HOST_VERSIONS[host]}`);
}

/** The marker written last by a finished install: a half-done one is never taken for done. */
function marker(host: HostName): string {
  return join(prefix(host), ".installed");
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether a host is installed at its pinned version. */
export function hasHost(host: HostName): boolean {
  return exists(marker(host)) && exists(join(prefix(host), PLANS[host].bin()));
}

/** The path of a host's executable, or an error saying how to install it. */
export function hostBin(host: HostName): string {
  if (!hasHost(host)) {
    throw new Error(
      `${host} ${
        HOST_VERSIONS[host]
      } is not installed under ${hostsDir()}: run \`${INSTALL_HINT}\` (.ci/run does)`,
    );
  }
  return join(prefix(host), PLANS[host].bin());
}

/** Claude Code's native binary. */
export function claudeBin(): string {
  return hostBin("claude");
}

/** Gemini CLI's bundled entry (a Node script with a shebang; run it with `node`). */
export function geminiBin(): string {
  return hostBin("gemini");
}

/**
 * Options for a host test: ignored when the host is missing outside CI (with one line on stderr),
 * failing in CI. Spread into `Deno.test({...})`.
 */
export function hostTestOptions(...hosts: HostName[]): { ignore: boolean } {
  const missing = hosts.filter((h) => !hasHost(h));
  if (missing.length > 0 && !IN_CI) {
    const said = globalThis as { __waymarkHostsSaid?: boolean };
    if (!said.__waymarkHostsSaid) {
      said.__waymarkHostsSaid = true;
      console.error(
        `skipping host tests: ${missing.join(", ")} not installed; run \`${INSTALL_HINT}\``,
      );
    }
  }
  return { ignore: missing.length > 0 && !IN_CI };
}

/** Installs one host into the cache (no install scripts, pinned), unless it is already there. */
export async function installHost(host: HostName): Promise<string> {
  if (hasHost(host)) return hostBin(host);
  const final = prefix(host);
  const staging = `${final}.tmp-${Deno.pid}`;
  await Deno.mkdir(staging, { recursive: true });
  const args = [
    "install",
    "--prefix",
    staging,
    "--no-save",
    "--ignore-scripts",
    "--omit=optional",
    "--no-audit",
    "--no-fund",
    "--no-package-lock",
    "--loglevel=error",
    "--engine-strict=false",
    ...PLANS[host].packages(),
  ];
  const out = await new Deno.Command("npm", { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-8).join("\n");
    throw new Error(`npm install of ${host} ${HOST_VERSIONS[host]} failed:\n${err}`);
  }
  const bin = join(staging, PLANS[host].bin());
  if (!exists(bin)) throw new Error(`${host}: ${bin} is missing after npm install`);
  if (Deno.build.os !== "windows") await Deno.chmod(bin, 0o755);
  await Deno.writeTextFile(join(staging, ".installed"), `${HOST_VERSIONS[host]}\n`);
  // another process may have finished first: keep its copy
  await Deno.remove(final, { recursive: true }).catch(() => {});
  try {
    await Deno.rename(staging, final);
  } catch (error) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    if (!hasHost(host)) throw error;
  }
  return hostBin(host);
}

/** Checks an installed host answers `--version` with its pinned version. */
export async function hostVersion(host: HostName): Promise<string> {
  const bin = hostBin(host);
  const [cmd, args] = host === "gemini" ? ["node", [bin, "--version"]] : [bin, ["--version"]];
  const out = await new Deno.Command(cmd, {
    args,
    env: { DISABLE_AUTOUPDATER: "1", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

if (import.meta.main) {
  if (Deno.args[0] !== "install") {
    console.error(`usage: ${INSTALL_HINT}`);
    Deno.exit(2);
  }
  for (const host of Object.keys(HOST_VERSIONS) as HostName[]) {
    if (hasHost(host)) {
      console.error(`== host ${host} ${HOST_VERSIONS[host]} (cached): ${hostBin(host)}`);
      continue;
    }
    await installHost(host);
    const version = await hostVersion(host);
    if (!version.includes(HOST_VERSIONS[host])) {
      console.error(`${host}: expected version ${HOST_VERSIONS[host]}, got "${version}"`);
      Deno.exit(1);
    }
    console.error(`== host ${host} ${version}: ${hostBin(host)}`);
  }
}
