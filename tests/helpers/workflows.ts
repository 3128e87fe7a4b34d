/**
 * Generated workflows for tests and the bench: long runs of plain steps, written as project
 * workflows so a server started with that workspace finds them.
 * @module
 */
import { join } from "node:path";

/** The text of a workflow of `steps` plain steps with the given id. */
export function plainWorkflow(id: string, steps: number): string {
  const width = Math.max(2, String(steps).length);
  return JSON.stringify({
    id,
    name: `Generated: ${id}`,
    description: `A generated ${steps}-step workflow.`,
    version: "1.0.0",
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${String(i + 1).padStart(width, "0")}`,
      title: `Step ${i + 1}`,
      prompt: `Do step ${i + 1} and report in one line.`,
    })),
  });
}

/** Writes {@linkcode plainWorkflow} into `<workspace>/.waymark/workflows/<name>.json`. */
export async function writeProjectWorkflow(
  workspace: string,
  options: { id: string; steps: number },
): Promise<string> {
  const dir = join(workspace, ".waymark", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  const file = join(dir, `${options.id.replace(/^project\./, "")}.json`);
  await Deno.writeTextFile(file, plainWorkflow(options.id, options.steps));
  return file;
}

/** What a pending step may ask for besides notes (the fields of `pending` that matter here). */
export interface Gated {
  /** The contract, with its example artifact. */
  outputContract?: { example: Record<string, unknown> };
  /** The assessments, with their levels. */
  assessments?: { assessmentId: string; dimensions: { id: string; levels: string[] }[] }[];
}

/**
 * Artifacts that pass a pending step's gates: its contract's example and, for each assessment,
 * the last level of every dimension (the bundled workflows list levels worst first).
 */
export function passingArtifacts(pending: Gated): Record<string, unknown>[] {
  return [
    ...(pending.outputContract ? [pending.outputContract.example] : []),
    ...(pending.assessments ?? []).map((a) => ({
      kind: "wr.assessment",
      assessmentId: a.assessmentId,
      dimensions: Object.fromEntries(a.dimensions.map((d) => [d.id, d.levels.at(-1)!])),
    })),
  ];
}

/**
 * `{artifacts}` passing a pending step's gates, or nothing when it has none (so the payload of
 * a plain step's acknowledgement, and the digest a replay compares, stay notes alone).
 */
export function gated(pending: Gated): { artifacts?: Record<string, unknown>[] } {
  const artifacts = passingArtifacts(pending);
  return artifacts.length ? { artifacts } : {};
}
