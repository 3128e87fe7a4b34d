/**
 * `deno task warm`: fetches into Deno's cache every npm package `waymark serve` imports (the
 * start-up path and each part it loads on first use, `lazy.ts`), so that a first start from a
 * clone downloads nothing. The team store's driver (`pg`) is left out: it loads only for a
 * `postgres://` database, and is fetched then. It caches them twice: as the lock file pins them,
 * and as a run without the config resolves them (`--no-config`: what `waymark setup` writes into
 * a host's entry, and what a URL run does), whose transitive versions the lock does not pin. See
 * docs/install.md.
 * @module
 */
import { fileURLToPath } from "node:url";
import { LAZY_MODULES } from "../lazy.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The modules to cache: the entry, and every part loaded on first use but the team store's. */
export const WARMED: readonly string[] = [
  "main.ts",
  ...Object.entries(LAZY_MODULES).filter(([name]) => name !== "postgres").map(([, m]) => m.path),
];

/** Caches {@linkcode WARMED} both ways; the exit code of the first that failed, else 0. */
export async function warm(): Promise<number> {
  for (const config of [[], ["--no-config"]]) {
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: ["cache", ...config, ...WARMED],
      cwd: ROOT,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (code !== 0) return code;
  }
  return 0;
}

if (import.meta.main) Deno.exit(await warm());
