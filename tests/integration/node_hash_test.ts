/**
 * workflowHash is the same on Deno and on Node: the engine is bundled for Node with `deno bundle`
 * (offline, from the local npm cache), and Node compiles the same files (the corpus when it is
 * beside the checkout, and the bundled workflows) to the same hashes as Deno.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadWorkflowFiles, type SourceFile } from "../../engine/workflow/catalog.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { CORPUS_DIR, corpusSources } from "../helpers/corpus.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function nodeBinary(): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      const path = join(dir, "node");
      if (Deno.statSync(path).isFile) return path;
    } catch { /* not here */ }
  }
  return null;
}

const NODE = nodeBinary();

async function denoHashes(files: SourceFile[]): Promise<Record<string, string>> {
  const results = await loadWorkflowFiles(files);
  return Object.fromEntries(
    results.map((r) => {
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      return [r.workflow.file, r.workflow.hash];
    }),
  );
}

Deno.test({
  name: "the same files compile to the same workflowHash on Deno and on Node",
  ignore: NODE === null,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "waymark-node-hash-" });
    try {
      const bundle = join(dir, "engine.mjs");
      const built = await new Deno.Command(Deno.execPath(), {
        args: ["bundle", "--quiet", "--platform=node", "-o", bundle, join(ROOT, "engine/mod.ts")],
        cwd: ROOT,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
      const files: SourceFile[] = [
        ...BUNDLED_WORKFLOWS,
        ...(CORPUS_DIR ? corpusSources() : []),
      ];
      await Deno.writeTextFile(join(dir, "files.json"), JSON.stringify(files));
      await Deno.writeTextFile(
        join(dir, "hash.mjs"),
        `import { readFileSync } from "node:fs";
import { loadWorkflowFiles } from "./engine.mjs";
const files = JSON.parse(readFileSync(new URL("./files.json", import.meta.url), "utf8"));
const results = await loadWorkflowFiles(files);
const out = {};
for (const r of results) {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  out[r.workflow.file] = r.workflow.hash;
}
process.stdout.write(JSON.stringify(out));
`,
      );
      const ran = await new Deno.Command(NODE!, {
        args: [join(dir, "hash.mjs")],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(ran.code, 0, new TextDecoder().decode(ran.stderr));
      const onNode = JSON.parse(new TextDecoder().decode(ran.stdout));
      const onDeno = await denoHashes(files);
      const again = await denoHashes(files);
      assert.deepEqual(again, onDeno, "compiling twice gives the same hashes");
      assert.deepEqual(onNode, onDeno);
      assert.equal(Object.keys(onNode).length, files.length);
      const version = new TextDecoder().decode(
        (await new Deno.Command(NODE!, { args: ["--version"], stdout: "piped" }).output()).stdout,
      ).trim();
      console.log(`hashes: ${files.length} files, identical on Deno and Node ${version}`);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
