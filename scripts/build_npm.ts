/**
 * `deno task build:npm`: builds `mod.ts` into an npm package in `dist/` for Node >= 20.
 *
 * - `dist/mod.js` and the subpath entries `dist/{engine,store,tools}/mod.js`: ES modules from one
 *   `deno bundle --code-splitting` run, so code they share lives in shared chunks once (a class
 *   such as `StorageCorruptionError` is the same class from every entry). waymark's own code
 *   (and the bundled workflows, which are `with { type: "text" }` imports) is inlined; npm
 *   packages stay external and their pinned `npm:name@version` specifiers become bare imports
 *   (`name`), so Node resolves them from `node_modules` and they dedupe with the user's copies.
 * - `dist/**.d.ts`: declarations emitted by `tsc` (a pinned `typescript`, installed with npm into
 *   `node_modules/.cache/waymark-build-npm/`) from a copy of the entry points' local module graphs in
 *   which the same specifiers are rewritten, so the declarations import the same bare names.
 * - `dist/package.json`: name `waymark`, the version `mod.ts` says (`VERSION`), `exports` (`.` and one subpath
 *   per entry) with `types` and `import`, and the npm packages the bundle imports as exact-version
 *   dependencies.
 *
 * Only the npm registry is needed (for the toolchain, once; later builds reuse the cache).
 * Other files in `dist/` (such as `deno task compile`'s binary) are left alone.
 * @module
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { pathToFileURL } from "node:url";
import { writeBuildMap } from "./build_kind.ts";
import { bundleArgs, lazyStandIn } from "./bundle.ts";
import { VERSION } from "../version.ts";

/** Pinned toolchain for the declarations. TypeScript 7 is the native compiler: the build's
 * declarations take 2.0 s of CPU with it where 6.0.3 took 6.8 s, and the same types (only the
 * order of union members differs). */
const TYPESCRIPT_VERSION = "7.0.2";
const TYPES_NODE_VERSION = "20.19.43";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
const DIST = join(ROOT, "dist");
const CACHE = join(ROOT, "node_modules", ".cache", "waymark-build-npm");
const NPM = Deno.build.os === "windows" ? "npm.cmd" : "npm";
const NODE = Deno.build.os === "windows" ? "node.exe" : "node";
/** `deno task bundle`'s output, which shares dist/ and is not part of the package. */
const SINGLE_FILE = [join(DIST, "waymark.js")];

/** The package's entry points: `.` is the root, the others are subpaths (`waymark/engine`). */
const ENTRIES: Record<string, string> = {
  ".": "mod.ts",
  "./engine": "engine/mod.ts",
  "./store": "store/mod.ts",
  "./tools": "tools/mod.ts",
};

/** A `npm:name@version/sub` specifier in an import position, in bundled or source code. */
const NPM_IMPORT =
  /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)(["'])npm:((?:@[^/"'@]+\/)?[^/"'@]+)(?:@([^/"']+))?(\/[^"']*)?\2/g;

function log(message: string): void {
  console.error(`build:npm: ${message}`);
}

class BuildError extends Error {}

/** Runs a command; throws with its output when it fails. */
async function run(cmd: string, args: string[], options: { cwd?: string } = {}): Promise<string> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(cmd, {
      args,
      cwd: options.cwd ?? ROOT,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1", npm_config_update_notifier: "false", npm_config_fund: "false" },
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new BuildError(
        `\`${cmd}\` is not installed or not on PATH (Node >= 20 and npm needed)`,
      );
    }
    throw error;
  }
  const decoder = new TextDecoder();
  const stdout = decoder.decode(output.stdout);
  if (!output.success) {
    const stderr = decoder.decode(output.stderr);
    throw new BuildError(
      `\`${cmd} ${args.join(" ")}\` failed (exit ${output.code}):\n${stdout}${stderr}`.trim(),
    );
  }
  return stdout;
}

/**
 * Rewrites every `npm:name@version[/sub]` import to `name[/sub]` and records `name → version`.
 * Fails on an unpinned specifier or on two versions of one package.
 */
export function rewriteNpmImports(code: string, deps: Map<string, string>): string {
  return code.replace(NPM_IMPORT, (_m, lead: string, quote: string, name, version, sub) => {
    if (!version || !/^\d+\.\d+\.\d+(?:[-+][\w.+-]*)?$/.test(version)) {
      throw new BuildError(`npm:${name}@${version ?? ""} is not pinned to an exact version`);
    }
    const known = deps.get(name);
    if (known && known !== version) {
      throw new BuildError(`two versions of ${name} are imported: ${known} and ${version}`);
    }
    deps.set(name, version);
    return `${lead}${quote}${name}${sub ?? ""}${quote}`;
  });
}

/**
 * The type packages the sources name in `// @ts-types="npm:@types/name@version"` directives
 * (for packages that ship no types): the declarations need them, and so do a consumer's.
 */
async function typePackages(deps: Map<string, string>): Promise<void> {
  for (const file of await localGraph()) {
    const text = await Deno.readTextFile(file);
    for (const [, name, version] of text.matchAll(/@ts-types="npm:(@types\/[^@"]+)@([^"]+)"/g)) {
      deps.set(name!, version!);
    }
  }
}

/** Removes this build's earlier outputs from dist/ (and nothing else). */
async function cleanDist(): Promise<void> {
  await Deno.mkdir(DIST, { recursive: true });
  for (const name of ["package.json", "README.md"]) {
    await Deno.remove(join(DIST, name)).catch(() => {});
  }
  async function sweep(dir: string): Promise<boolean> {
    let empty = true;
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && entry.name !== "node_modules") {
        if (await sweep(path)) await Deno.remove(path);
        else empty = false;
      } else if (entry.isFile && /\.(d\.ts|js)$/.test(entry.name) && !SINGLE_FILE.includes(path)) {
        await Deno.remove(path);
      } else {
        empty = false;
      }
    }
    return empty;
  }
  await sweep(DIST);
}

/** `deno bundle` of every entry with npm packages external, then bare specifiers. */
async function bundle(deps: Map<string, string>): Promise<number> {
  const raw = join(CACHE, "bundle");
  await Deno.remove(raw, { recursive: true }).catch(() => {});
  // BUILD_KIND = "npm"; the library's on-demand modules inlined (the source loader computes URLs)
  const standIn = await lazyStandIn({ within: "library", web: "npm" });
  const map = await writeBuildMap("npm", { "lazy.ts": pathToFileURL(standIn).href });
  await run(Deno.execPath(), [
    ...bundleArgs(map),
    "--code-splitting",
    "--outdir",
    raw,
    ...Object.values(ENTRIES).map((entry) => join(ROOT, entry)),
  ]);
  const header = "// waymark: built by `deno task build:npm`; do not edit.\n";
  let size = 0;
  for await (const file of walkFiles(raw, ".js")) {
    const code = rewriteNpmImports(await Deno.readTextFile(file), deps);
    if (/\bDeno\.[A-Za-z]/.test(code)) {
      throw new BuildError(
        `the bundle uses the Deno namespace, which Node does not have (${file})`,
      );
    }
    const target = join(DIST, relative(raw, file));
    await Deno.mkdir(dirname(target), { recursive: true });
    await Deno.writeTextFile(target, header + code);
    size += header.length + code.length;
  }
  return size;
}

/** The local files of the entry points' module graphs (TypeScript and JSON; text imports are ambient). */
async function localGraph(): Promise<string[]> {
  const files = new Set<string>();
  for (const entry of Object.values(ENTRIES)) {
    const info = JSON.parse(await run(Deno.execPath(), ["info", "--json", join(ROOT, entry)]));
    for (const module of info.modules as { specifier: string; mediaType?: string }[]) {
      if (!module.specifier.startsWith("file:")) continue;
      if (!["TypeScript", "TSX", "Json"].includes(module.mediaType ?? "")) continue;
      files.add(fromFileUrl(module.specifier));
    }
  }
  return [...files];
}

/** Installs the pinned toolchain and the bundle's dependencies (for their types), once. */
async function ensureToolchain(deps: Map<string, string>): Promise<void> {
  const manifest = JSON.stringify(
    {
      private: true,
      description: "toolchain for `deno task build:npm` (generated)",
      dependencies: {
        ...Object.fromEntries([...deps].sort(([a], [b]) => a.localeCompare(b))),
        "@types/node": TYPES_NODE_VERSION,
        typescript: TYPESCRIPT_VERSION,
      },
    },
    null,
    2,
  ) + "\n";
  const manifestPath = join(CACHE, "package.json");
  const current = await Deno.readTextFile(manifestPath).catch(() => null);
  const installed = await Deno.stat(join(CACHE, "node_modules", "typescript", "package.json"))
    .then(() => true, () => false);
  if (current === manifest && installed) return;
  log(`installing typescript@${TYPESCRIPT_VERSION} and the package's dependencies into ${CACHE}`);
  await Deno.writeTextFile(manifestPath, manifest);
  await run(NPM, [
    "install",
    "--no-audit",
    "--no-fund",
    "--no-package-lock",
    "--ignore-scripts",
    "--loglevel=error",
  ], { cwd: CACHE });
}

/** Emits declarations for mod.ts into dist/ with tsc. */
async function declarations(deps: Map<string, string>): Promise<void> {
  // Staged outside node_modules (tsc never emits for files under node_modules), with a link to
  // the toolchain's node_modules for the bare imports.
  const src = await Deno.makeTempDir({ prefix: "waymark-build-npm-" });
  try {
    await Deno.symlink(join(CACHE, "node_modules"), join(src, "node_modules"), { type: "dir" });
    await emitDeclarations(src, deps);
  } finally {
    await Deno.remove(src, { recursive: true });
  }
}

async function emitDeclarations(src: string, deps: Map<string, string>): Promise<void> {
  for (const file of await localGraph()) {
    const target = join(src, relative(ROOT, file));
    await Deno.mkdir(dirname(target), { recursive: true });
    if (file.endsWith(".json")) {
      await Deno.copyFile(file, target); // data, such as the published tool schemas
      continue;
    }
    const seen = new Map(deps);
    await Deno.writeTextFile(target, rewriteNpmImports(await Deno.readTextFile(file), seen));
    for (const [name, version] of seen) {
      if (deps.get(name) !== version) {
        throw new BuildError(
          `${relative(ROOT, file)} imports npm:${name}@${version}, not in the bundle's imports`,
        );
      }
    }
  }
  await Deno.writeTextFile(
    join(src, "text_imports.d.ts"),
    '/** Bundled workflows: `with { type: "text" }` imports. */\n' +
      'declare module "*.jsonc" {\n  const text: string;\n  export default text;\n}\n',
  );
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "bundler",
      lib: ["ES2023"],
      types: ["node"],
      strict: true,
      skipLibCheck: true,
      declaration: true,
      emitDeclarationOnly: true,
      // `deno task check` type-checks this code; tsc only writes its declarations (half the time)
      noCheck: true,
      allowImportingTsExtensions: true,
      resolveJsonModule: true,
      rewriteRelativeImportExtensions: true,
      rootDir: ".",
      outDir: DIST,
    },
    files: [...Object.values(ENTRIES), "text_imports.d.ts"],
  };
  await Deno.writeTextFile(join(src, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
  await run(NODE, [join(CACHE, "node_modules", "typescript", "bin", "tsc"), "-p", src], {
    cwd: src,
  });
  await Deno.remove(join(DIST, "text_imports.d.ts")).catch(() => {});
  // Relative imports in declarations must name the emitted files.
  for await (const file of walkFiles(DIST, ".d.ts")) {
    const text = await Deno.readTextFile(file);
    const fixed = text.replace(
      /((?:\bfrom\s*|\bimport\s*\(\s*)["'])(\.{1,2}\/[^"']*?)\.ts(["'])/g,
      "$1$2.js$3",
    );
    if (fixed !== text) await Deno.writeTextFile(file, fixed);
  }
}

async function* walkFiles(dir: string, suffix: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && entry.name !== "node_modules") yield* walkFiles(path, suffix);
    else if (entry.isFile && entry.name.endsWith(suffix)) yield path;
  }
}

/** Writes dist/package.json and a short README. */
async function packageJson(version: string, deps: Map<string, string>): Promise<void> {
  const pkg = {
    name: "waymark",
    version,
    description:
      "Local, rewind-safe workflow runtime for AI coding agents (MCP), embeddable from Node.",
    type: "module",
    main: "./mod.js",
    types: "./mod.d.ts",
    exports: Object.fromEntries(
      Object.entries(ENTRIES).map(([path, entry]) => {
        const base = `./${entry.replace(/\.ts$/, "")}`;
        return [path, { types: `${base}.d.ts`, import: `${base}.js` }];
      }),
    ),
    files: ["**/*.js", "**/*.d.ts", "README.md", "!waymark.js"],
    engines: { node: ">=20" },
    sideEffects: false,
    dependencies: Object.fromEntries([...deps].sort(([a], [b]) => a.localeCompare(b))),
  };
  await Deno.writeTextFile(join(DIST, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  await Deno.writeTextFile(
    join(DIST, "README.md"),
    `# waymark ${version}\n\nwaymark's library API (\`mod.ts\`) built for Node >= 20.\n\n` +
      "```js\n" +
      'import { openWaymark } from "waymark";\n' +
      "const waymark = await openWaymark(); // $WAYMARK_HOME or ~/.waymark\n" +
      'const started = await waymark.start({ workflowId: "waymark.code_review" });\n' +
      "await waymark.close();\n" +
      "```\n",
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  const deps = new Map<string, string>();
  await cleanDist();
  const version = VERSION;
  const size = await bundle(deps);
  await typePackages(deps);
  await ensureToolchain(deps);
  await declarations(deps);
  await packageJson(version, deps);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log(
    `dist/ ready: waymark@${version}, mod.js ${(size / 1024).toFixed(0)} KiB, ` +
      `${deps.size} dependencies (${[...deps.keys()].join(", ")}), ${seconds}s`,
  );
}

if (import.meta.main) {
  try {
    await main();
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    log(error.message);
    Deno.exit(1);
  }
}
