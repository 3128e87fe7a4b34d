/**
 * Prompt text: `promptBlocks` rendered to Markdown in a fixed order at compile time, and
 * `{{var}}` placeholders filled from context at run time. Deterministic to the byte.
 * @module
 */
import type { PromptBlocks } from "./schema.ts";
import { readVar } from "./conditions.ts";

function list(items: readonly string[], numbered: boolean): string {
  return items.map((item, i) => `${numbered ? `${i + 1}.` : "-"} ${item}`).join("\n");
}

/** Renders structured prompt parts to Markdown: goal, constraints, procedure, output, verify. */
export function renderPromptBlocks(blocks: PromptBlocks): string {
  const parts: string[] = [];
  if (blocks.goal) parts.push(`## Goal\n${blocks.goal}`);
  if (blocks.constraints?.length) parts.push(`## Constraints\n${list(blocks.constraints, false)}`);
  if (blocks.procedure?.length) parts.push(`## Procedure\n${list(blocks.procedure, true)}`);
  if (blocks.outputRequired !== undefined) {
    const out = blocks.outputRequired;
    parts.push(`## Output required\n${typeof out === "string" ? out : list(out, false)}`);
  }
  if (blocks.verify?.length) parts.push(`## Verify\n${list(blocks.verify, false)}`);
  return parts.join("\n\n");
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;

/**
 * Fills `{{var}}` and `{{a.b}}` from context. A missing variable stays as written so the agent
 * sees what was expected; objects render as compact JSON.
 */
export function fillPlaceholders(template: string, context: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (whole, path: string) => {
    const value = readVar(context, path);
    if (value === undefined || value === null) return whole;
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}
