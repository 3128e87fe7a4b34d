/**
 * `deno task bundle [OUT]`: waymark as one JavaScript file (default `dist/waymark.js`) that runs
 * with `deno run -A waymark.js serve` (or `view`, or any other command) from any folder or URL.
 * Inside: waymark's code, the bundled workflows and the viewer's assets (`with { type: "text" }`
 * imports), and the zod schema the published JSON Schema comes from (`waymark workflows
 * schema`). npm packages stay `npm:name@version` imports that Deno resolves, `@libsql/client`'s
 * native addon among them. `build.ts` is mapped to say `bundle`, and `web/lazy.ts` to its literal
 * twin so the viewer and the HTTP endpoint are inlined.
 * @module
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { writeBuildMap } from "./build_kind.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Bundles main.ts into `output`; returns its size in bytes. */
export async function bundle(output: string): Promise<number> {
  const map = await writeBuildMap("bundle", { "web/lazy.ts": "web/lazy_bundle.ts" });
  try {
    const raw = join(map.dir, "waymark.js");
    const result = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--import-map",
        map.file,
        "--platform",
        "deno",
        "--format",
        "esm",
        "--external",
        "npm:*",
        "--output",
        raw,
        join(ROOT, "main.ts"),
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    if (!result.success) {
      throw new Error(`deno bundle failed:\n${new TextDecoder().decode(result.stderr)}`);
    }
    const code = await Deno.readTextFile(raw);
    const text = "#!/usr/bin/env -S deno run -A\n" +
      "// waymark: built by `deno task bundle`; do not edit.\n" + code;
    await Deno.mkdir(dirname(output), { recursive: true });
    await Deno.writeTextFile(output, text);
    return new TextEncoder().encode(text).length;
  } finally {
    await Deno.remove(map.dir, { recursive: true });
  }
}

if (import.meta.main) {
  const output = Deno.args[0] ?? join(ROOT, "dist", "waymark.js");
  try {
    const size = await bundle(output);
    console.error(
      `built ${relative(Deno.cwd(), output) || output} (${Math.round(size / 1024)} KiB)`,
    );
  } catch (error) {
    console.error(`bundle: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
