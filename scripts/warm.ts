/**
 * `deno task warm`: fetches into Deno's cache every npm package `waymark serve` imports (the
 * start-up path and each part it loads on first use, `lazy.ts`), so that a first start from a
 * clone downloads nothing. The team store's driver (`pg`) is left out: it loads only for a
 * `postgres://` database, and is fetched then. See docs/install.md.
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

if (import.meta.main) {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["cache", ...WARMED],
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  Deno.exit(code);
}
