/**
 * Prompt text: `promptBlocks` rendered to Markdown in a fixed order at compile time (snippet
 * references resolved), and `{{var}}` placeholders filled from context at run time.
 * Deterministic to the byte.
 * @module
 */
import type { PromptBlocks, PromptValue } from "./schema.ts";
import { readVar } from "./conditions.ts";
import { SNIPPETS } from "./library.ts";

function list(items: readonly string[], numbered: boolean): string {
  return items.map((item, i) => `${numbered ? `${i + 1}.` : "-"} ${item}`).join("\n");
}

/** The text of a prompt value: a string, or its parts joined (refs become their snippet text). */
export function promptValueText(value: PromptValue): string {
  if (typeof value === "string") return value;
  return value.map((part) =>
    part.kind === "text" ? part.text : SNIPPETS.get(part.refId) ?? `[unknown snippet ${part.refId}]`
  ).join("");
}

/** Every snippet id a prompt-blocks object references. */
export function referencedSnippets(blocks: PromptBlocks): string[] {
  const values: PromptValue[] = [
    ...(blocks.goal !== undefined ? [blocks.goal] : []),
    ...(blocks.constraints ?? []),
    ...(blocks.procedure ?? []),
    ...(blocks.verify ?? []),
  ];
  const ids: string[] = [];
  for (const v of values) {
    if (typeof v !== "string") { for (const p of v) if (p.kind === "ref") ids.push(p.refId); }
  }
  return ids;
}

/** Renders structured prompt parts to Markdown: goal, constraints, procedure, output, verify. */
export function renderPromptBlocks(blocks: PromptBlocks): string {
  const parts: string[] = [];
  const texts = (values: readonly PromptValue[] | undefined) => (values ?? []).map(promptValueText);
  if (blocks.goal !== undefined) parts.push(`## Goal\n${promptValueText(blocks.goal)}`);
  if (blocks.constraints?.length) {
    parts.push(`## Constraints\n${list(texts(blocks.constraints), false)}`);
  }
  if (blocks.procedure?.length) parts.push(`## Procedure\n${list(texts(blocks.procedure), true)}`);
  if (blocks.outputRequired !== undefined) {
    const out = blocks.outputRequired;
    const body = typeof out === "string"
      ? out
      : Array.isArray(out)
      ? list(out, false)
      : list(Object.entries(out).map(([k, v]) => `\`${k}\`: ${v}`), false);
    parts.push(`## Output required\n${body}`);
  }
  if (blocks.verify?.length) parts.push(`## Verify\n${list(texts(blocks.verify), false)}`);
  return parts.join("\n\n");
}

const PLACEHOLDER =
  /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*(?:([+-])\s*(\d{1,9})\s*)?\}\}/g;

/**
 * Fills `{{var}}` and `{{a.b}}` from context (`{{list.length}}` gives an array's length, and
 * `{{n + 1}}` / `{{n - 1}}` offset a number). A missing variable renders as an explicit marker,
 * `(not provided: name)`, so no raw braces reach the agent; an offset on a value that is not a
 * number stays as written; objects render as compact JSON.
 */
export function fillPlaceholders(template: string, context: Record<string, unknown>): string {
  return template.replace(
    PLACEHOLDER,
    (whole, path: string, sign: string | undefined, amount: string | undefined) => {
      const value = readVar(context, path);
      if (value === undefined || value === null) return notProvided(path);
      if (sign !== undefined) {
        if (typeof value !== "number") return whole;
        return String(sign === "+" ? value + Number(amount) : value - Number(amount));
      }
      return typeof value === "string" ? value : JSON.stringify(value);
    },
  );
}

/** The marker a placeholder with no value renders as. */
export function notProvided(name: string): string {
  return `(not provided: ${name})`;
}

/** The placeholders of `template` that `context` has no value for, in order, once each. */
export function missingPlaceholders(template: string, context: Record<string, unknown>): string[] {
  const missing = new Set<string>();
  for (const match of template.matchAll(PLACEHOLDER)) {
    const value = readVar(context, match[1]!);
    if (value === undefined || value === null) missing.add(match[1]!);
  }
  return [...missing];
}

/** Every placeholder name in `template`, in order, once each. */
export function placeholderNames(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}
