/**
 * Whether a stored run state is a position in a compiled workflow: each loop frame names a
 * loop of the sequence it sits in and a running iteration, and `pc` falls within the innermost
 * sequence (its end included: a finished sequence). Reads untrusted snapshots without throwing.
 * @module
 */
import type { CompiledNode, CompiledWorkflow } from "./compiled.ts";
import { normalizeCompiled } from "./compiled.ts";

const isIndex = (n: unknown, length: number): n is number =>
  typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= length;

/** Why `state` is no position in `compiled`, or `null` when it is one. */
export function positionProblem(compiled: CompiledWorkflow, state: unknown): string | null {
  if (typeof state !== "object" || state === null) return "the state is not an object";
  const s = state as { v?: unknown; pc?: unknown; frames?: unknown };
  const frames = s.v === 1 ? [] : s.frames;
  if ((s.v !== 1 && s.v !== 2) || !Array.isArray(frames)) return "the state has no known version";
  let seq: unknown = normalizeCompiled(compiled).steps;
  for (const [i, frame] of frames.entries()) {
    const f = frame as { at?: unknown; it?: unknown };
    const nodes = Array.isArray(seq) ? seq as CompiledNode[] : [];
    const loop = isIndex(f?.at, nodes.length - 1) ? nodes[f.at as number] : undefined;
    if (loop?.kind !== "loop") return `loop frame ${i} names no loop of the workflow`;
    if (typeof f.it !== "number" || !Number.isInteger(f.it) || f.it < 1) {
      return `loop frame ${i} has no running iteration`;
    }
    seq = loop.body;
  }
  const length = Array.isArray(seq) ? seq.length : 0;
  return isIndex(s.pc, length) ? null : `its position ${String(s.pc)} is outside the workflow`;
}

/** Every step id of a compiled workflow, loops' bodies included. */
export function stepIds(compiled: CompiledWorkflow): Set<string> {
  const out = new Set<string>();
  const stack: unknown[] = [normalizeCompiled(compiled).steps];
  while (stack.length > 0) {
    const seq = stack.pop();
    if (!Array.isArray(seq)) continue;
    for (const node of seq as CompiledNode[]) {
      if (node?.kind === "step") out.add(node.id);
      else if (node?.kind === "loop") stack.push(node.body);
    }
  }
  return out;
}
