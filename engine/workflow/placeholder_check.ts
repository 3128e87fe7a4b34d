/**
 * Which `{{placeholders}}` a workflow's prompts use that nothing it declares can fill. A
 * placeholder is filled from the context in effect (loop variables of the enclosing loops
 * over it), so its first name part counts as fillable when:
 * - a loop around the step declares it: `iterationVar` always, `indexVar` for `for` and
 *   `forEach`, `itemVar` for `forEach`;
 * - or the workflow names it as a context key somewhere: a condition's `var` (run conditions,
 *   loop conditions, prompt fragments, confirmations), a user dependency's `contextKey`, a
 *   `forEach`'s `items` or a `for`'s `count`. Those are keys the author expects the caller or
 *   the agent to set.
 * Anything else renders as `(not provided: name)` unless the caller happens to pass that key,
 * which is what `workflows validate` reports. Template arguments are filled at compile time and
 * never reach here.
 * @module
 */
import type { Warning } from "./catalog.ts";
import type { CompiledLoop, CompiledNode, CompiledWorkflow } from "./compiled.ts";
import { placeholderNames } from "./render.ts";
import type { Condition } from "./schema.ts";

function rootName(path: string): string {
  return path.split(".")[0]!;
}

function conditionVars(condition: Condition | undefined, out: Set<string>): void {
  if (!condition) return;
  if ("and" in condition) condition.and.forEach((c) => conditionVars(c, out));
  else if ("or" in condition) condition.or.forEach((c) => conditionVars(c, out));
  else if ("not" in condition) conditionVars(condition.not, out);
  else out.add(rootName(condition.var));
}

/** Every context key the workflow names (conditions, user dependencies, loop sources). */
function namedKeys(nodes: readonly CompiledNode[], out: Set<string>): Set<string> {
  for (const node of nodes) {
    conditionVars(node.runCondition, out);
    if (node.kind === "loop") {
      conditionVars(node.loop.condition, out);
      if (node.loop.items) out.add(rootName(node.loop.items));
      if (typeof node.loop.count === "string") out.add(rootName(node.loop.count));
      namedKeys(node.body, out);
      continue;
    }
    for (const f of node.fragments ?? []) conditionVars(f.when, out);
    if (typeof node.requireConfirmation !== "boolean") conditionVars(node.requireConfirmation, out);
    for (const d of node.userDependencies ?? []) out.add(rootName(d.contextKey));
  }
  return out;
}

function loopVars(loop: CompiledLoop): string[] {
  const { type, iterationVar, indexVar, itemVar } = loop.loop;
  if (type === "forEach") return [iterationVar, indexVar, itemVar];
  return type === "for" ? [iterationVar, indexVar] : [iterationVar];
}

/** One warning per step and placeholder that no loop variable in scope or named key fills. */
export function unfillablePlaceholders(compiled: CompiledWorkflow): Warning[] {
  const named = namedKeys(compiled.steps, new Set());
  const warnings: Warning[] = [];
  const walk = (nodes: readonly CompiledNode[], scope: ReadonlySet<string>) => {
    for (const node of nodes) {
      if (node.kind === "loop") {
        walk(node.body, new Set([...scope, ...loopVars(node)]));
        continue;
      }
      const text = [node.promptTemplate, ...(node.fragments ?? []).map((f) => f.text)].join("\n");
      for (const name of placeholderNames(text)) {
        const root = rootName(name);
        if (scope.has(root) || named.has(root)) continue;
        warnings.push({
          code: "UNFILLED_PLACEHOLDER",
          message:
            `step \`${node.id}\` uses {{${name}}}, but no loop around it declares \`${root}\` and no condition, user dependency or loop of the workflow reads a context key \`${root}\`: it shows as "(not provided: ${name})" unless the caller passes \`context.${root}\``,
        });
      }
    }
  };
  walk(compiled.steps, new Set());
  return warnings;
}
