/**
 * `deno task compile [--target T] [--output FILE] [--bundle FILE] [--self-extracting]`: the
 * single `waymark` binary, compiled from the single-file build (`deno task bundle`, in its flavour with the web
 * adapters inlined, since a binary's module graph is fixed). Everything is in that file (code, bundled workflows, viewer assets), so
 * nothing needs `--include`; the npm packages, `@libsql/client`'s native addon among them, are
 * embedded by `deno compile` itself. `--bundle` compiles a bundle built beforehand (`import {
 * bundle } from "./bundle.ts"`, inline flavour) instead of building one, for a machine that can
 * reach the npm registry only at some moments (CI builds once, compiles per target).
 * `--self-extracting` is passed on, for a platform where the addon will not load from inside
 * the binary.
 *
 * The task needs nothing the bundle does not: `deno task` installs every package of the
 * workspace's import maps first, so packages only tests use are pinned outside them
 * (`scripts/pins.ts`). `deno compile` downloads its runtime stub (`denort`) on first use, and
 * `deno bundle` its esbuild. Where a download is impossible the task fails with one line naming
 * what it could not fetch, and no stack trace.
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundle } from "./bundle.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Thrown with the one line the task prints. */
class CompileError extends Error {}

/** Whether `deno compile` failed fetching its runtime stub (no network, DNS, proxy, TLS). */
function stubUnreachable(stderr: string): boolean {
  return /denort/i.test(stderr) &&
    /error sending request|dns error|failed to lookup|connect|network|timed out|certificate/i
      .test(stderr);
}

/**
 * What Deno could not fetch, named in one line (a package, else the URL), or `null` when the
 * failure was not a download.
 */
export function unfetched(stderr: string): string | null {
  const url = /error sending request for url \((\S+?)\)/.exec(stderr)?.[1];
  if (!url) return null;
  const pkg = /npm package '([^']+)'|for package "([^"]+)"/.exec(stderr);
  const what = pkg ? `npm package ${pkg[1] ?? pkg[2]} (${decodeURIComponent(url)})` : url;
  return `cannot fetch ${what}: this machine has no route to it; run it where there is internet`;
}

/** Deno's error without its backtrace, on one line. */
function firstError(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()); // NO_COLOR: no escapes to strip
  const error = lines.find((l) => l.startsWith("error:")) ?? lines.find((l) => l !== "") ?? "";
  return error.replace(/^error:\s*/, "");
}

/** What `deno compile` is told. */
interface CompileOptions {
  target?: string;
  output: string;
  selfExtracting: boolean;
}

async function compile(options: CompileOptions & { bundle?: string }) {
  if (options.bundle) return await denoCompile(options.bundle, options);
  // the bundle with the web adapters inlined: a binary's module graph is fixed when it is built
  const dir = await Deno.makeTempDir({ prefix: "waymark-compile-" });
  try {
    const input = join(dir, "waymark.js");
    await bundle(input, "inline").catch((error: Error) => {
      const stderr = error.message;
      throw new CompileError(unfetched(stderr) ?? `bundling failed: ${firstError(stderr)}`);
    });
    await denoCompile(input, options);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function denoCompile(input: string, options: CompileOptions): Promise<void> {
  // --no-check: the bundle is plain JavaScript, type-checked as source by `deno task check`
  const args = ["compile", "-A", "--quiet", "--no-check", "--output", options.output];
  if (options.target) args.push("--target", options.target);
  if (options.selfExtracting) args.push("--self-extracting");
  const result = await new Deno.Command(Deno.execPath(), {
    args: [...args, input],
    cwd: ROOT,
    stdout: "inherit",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  if (result.success) return;
  const stderr = new TextDecoder().decode(result.stderr);
  const target = options.target ?? Deno.build.target;
  if (stubUnreachable(stderr)) {
    throw new CompileError(
      `cannot download Deno's runtime stub (denort ${Deno.version.deno} for ${target}): ` +
        "this machine has no route to dl.deno.land; run `deno task compile` where there is " +
        "internet, or set DENORT_BIN to a local denort of the same version",
    );
  }
  throw new CompileError(unfetched(stderr) ?? `deno compile failed: ${firstError(stderr)}`);
}

if (import.meta.main) {
  try {
    const { values } = parseArgs({
      args: Deno.args,
      options: {
        target: { type: "string" },
        output: { type: "string" },
        bundle: { type: "string" },
        "self-extracting": { type: "boolean", default: false },
      },
    });
    const windows = (values.target ?? Deno.build.target).includes("windows");
    const output = values.output ?? join(ROOT, "dist", windows ? "waymark.exe" : "waymark");
    await compile({
      target: values.target,
      output,
      bundle: values.bundle,
      selfExtracting: values["self-extracting"],
    });
    console.error(`built ${output}`);
  } catch (error) {
    console.error(`compile: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
}
