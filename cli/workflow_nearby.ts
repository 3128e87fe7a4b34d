/**
 * What `workflows validate` and `workflows try` see beside a workflow file: the routines it may
 * call and the workflows its parallel steps may delegate to; and the JSON `--json` prints.
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { ROUTINES_SUBDIR } from "../store/workflow_files/states.ts";
import {
  compileParsed,
  type LoadedWorkflow,
  loadWorkflowFile,
  type ParsedSource,
  parseSourceFile,
  routinesAmong,
} from "../engine/workflow/catalog.ts";
import { parseWorkflowText } from "../engine/workflow/parse.ts";
import type { WorkflowFile } from "../engine/workflow/schema.ts";
import { delegatedIds, type Delegates } from "../engine/run/delegations.ts";
import { BUNDLED_WORKFLOWS } from "../workflows/mod.ts";

/**
 * What a file being validated sees beside it: the routines it may call (the bundled ones, and
 * those in its own folder and in a `routines/` folder beside it; files that fail to load are
 * simply not offered), and every workflow there, which its parallel steps may delegate to.
 */
export async function nearbyFiles(
  file: string,
): Promise<{ routines: Map<string, WorkflowFile>; parsed: ParsedSource[] }> {
  const candidates = [...BUNDLED_WORKFLOWS];
  for (const dir of [dirname(file), join(dirname(file), ROUTINES_SUBDIR)]) {
    let names: string[] = [];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names.filter((n) => /\.jsonc?$/.test(n) && !n.endsWith(".schema.json"))) {
      const path = join(dir, name);
      if (resolve(path) === resolve(file)) continue;
      candidates.push({ source: "extra", file: path, text: await readFile(path, "utf8") });
    }
  }
  const parsed = candidates.map((c) => parseSourceFile(c));
  return { routines: routinesAmong(parsed), parsed };
}

/**
 * The workflows the file's parallel steps may delegate to, found beside it, in the bundled
 * library, or the file itself (first found wins, as a library lists it).
 */
export async function nearbyDelegates(
  workflow: LoadedWorkflow,
  nearby: { routines: Map<string, WorkflowFile>; parsed: ParsedSource[] },
): Promise<Delegates> {
  const out = new Map<string, LoadedWorkflow>([[workflow.id, workflow]]);
  if (delegatedIds(workflow.compiled).size === 0) return out;
  for (const p of nearby.parsed) {
    if (!p.ok || out.has(p.file.id)) continue;
    const loaded = await compileParsed(p, nearby.routines);
    if (loaded.ok) out.set(loaded.workflow.id, loaded.workflow);
  }
  return out;
}

/** A value as the JSON `--json` prints: indented, one newline after. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * A workflow file loaded as `validate` and `try` see it: one with the text of a file waymark ships
 * is that bundled file (so it may use the reserved `waymark.` namespace), checked all the same;
 * with what lies beside it (`nearbyFiles`).
 */
export async function loadNearby(file: string): Promise<{
  text: string;
  nearby: Awaited<ReturnType<typeof nearbyFiles>>;
  loaded:
    | Awaited<ReturnType<typeof loadWorkflowFile>>
    | Extract<ReturnType<typeof parseWorkflowText>, { ok: false }>;
}> {
  const text = await readFile(file, "utf8");
  const shipped = BUNDLED_WORKFLOWS.some((b) => b.text === text);
  const checked = shipped ? parseWorkflowText(text, file) : null;
  const nearby = await nearbyFiles(file);
  const loaded = checked && !checked.ok ? checked : await loadWorkflowFile(
    { source: shipped ? "bundled" : "extra", file, text },
    { routines: nearby.routines },
  );
  return { text, nearby, loaded };
}
