/**
 * A compiled workflow as a graph: steps in order, the condition that guards each, loops with
 * their kind and bound, a parallel step's delegations, and the routines templateCalls expanded.
 * One model, drawn two ways: Mermaid text here (`workflows inspect --graph`), and SVG by the
 * viewer (`web/parts/workflow_graph.tsx`). Pure and byte-stable.
 * @module
 */
import type { CompiledLoop, CompiledNode, CompiledWorkflow } from "../workflow/compiled.ts";
import type { Condition } from "../workflow/schema.ts";

/** One item of the graph, in document order. */
export type GraphItem =
  | {
    kind: "step";
    id: string;
    title: string;
    /** The condition guarding it, in words. */
    condition?: string;
    /** The templateCall step it was expanded from, for a routine's step. */
    routine?: string;
    /** A parallel step's delegations: the workflow each opens, and when. */
    delegations?: { workflowId: string; condition?: string }[];
  }
  | {
    kind: "loop";
    id: string;
    title: string;
    condition?: string;
    /** The loop's kind and bound in words (`while done != true, max 5`). */
    bound: string;
    body: GraphItem[];
  };

/** A workflow's graph. */
export interface WorkflowGraph {
  /** The workflow id. */
  workflowId: string;
  /** Its items. */
  items: GraphItem[];
}

const OPS: Record<string, string> = {
  equals: "==",
  not_equals: "!=",
  gt: ">",
  gte: ">=",
  lt: "<",
  lte: "<=",
  in: "in",
  contains: "contains",
};

/** A condition in words: `risk == "high" and not (size > 3)`. */
export function conditionText(c: Condition): string {
  if ("and" in c) return c.and.map((x) => wrap(x)).join(" and ");
  if ("or" in c) return c.or.map((x) => wrap(x)).join(" or ");
  if ("not" in c) return `not ${wrap(c.not)}`;
  const op = Object.keys(OPS).find((k) => k in c)!;
  return `${c.var} ${OPS[op]} ${JSON.stringify((c as Record<string, unknown>)[op])}`;
}

function wrap(c: Condition): string {
  return "var" in c || "not" in c ? conditionText(c) : `(${conditionText(c)})`;
}

function boundText(loop: CompiledLoop): string {
  const l = loop.loop;
  const max = `max ${l.maxIterations}`;
  if (l.type === "for") return `for ${l.count} times, ${max}`;
  if (l.type === "forEach") return `for each ${l.itemVar} in ${l.items}, ${max}`;
  const what = l.artifact ? "the agent's loop_control decision" : conditionText(l.condition!);
  return `${l.type} ${what}, ${max}`;
}

function itemsOf(nodes: readonly CompiledNode[]): GraphItem[] {
  return nodes.map((n): GraphItem => {
    const condition = n.runCondition ? { condition: conditionText(n.runCondition) } : {};
    if (n.kind === "loop") {
      return {
        kind: "loop",
        id: n.id,
        title: n.title,
        ...condition,
        bound: boundText(n),
        body: itemsOf(n.body),
      };
    }
    const call = n.id.includes("--") ? { routine: n.id.slice(0, n.id.indexOf("--")) } : {};
    const delegations = n.delegations?.map((d) => ({
      workflowId: d.workflowId,
      ...(d.runCondition ? { condition: conditionText(d.runCondition) } : {}),
    }));
    return {
      kind: "step",
      id: n.id,
      title: n.title,
      ...condition,
      ...call,
      ...(delegations ? { delegations } : {}),
    };
  });
}

/** The graph of a compiled workflow. */
export function workflowGraph(compiled: CompiledWorkflow): WorkflowGraph {
  return { workflowId: compiled.id, items: itemsOf(compiled.steps) };
}

/** Mermaid's text for a label (lines joined by `<br/>`): quotes and angle brackets as entities. */
function label(...lines: string[]): string {
  const escape = (t: string) =>
    t.replace(/"/g, "#quot;").replace(/</g, "#lt;").replace(/>/g, "#gt;");
  return `"${lines.map(escape).join("<br/>")}"`;
}

/** A node id Mermaid accepts for a step or loop id. */
export function mermaidId(prefix: string, id: string): string {
  return `${prefix}_${id.replace(/[^A-Za-z0-9_]/g, "_")}`;
}

interface Drawn {
  lines: string[];
  /** The node the previous item's exit joins (with the label the edge carries). */
  entries: { from: string; label?: string }[];
}

/** Draws items in order; returns the exits left open at the end (each with its edge label). */
function draw(
  items: readonly GraphItem[],
  from: { from: string; label?: string }[],
  out: string[],
  indent: string,
): { from: string; label?: string }[] {
  let exits = from;
  let routine: string | null = null;
  for (const item of items) {
    const call = item.kind === "step" ? item.routine ?? null : null;
    if (routine !== null && call !== routine) {
      out.push(`${indent}end`);
      routine = null;
    }
    if (call !== null && routine === null) {
      out.push(`${indent}subgraph ${mermaidId("routine", call)}[${label(`routine: ${call}`)}]`);
      routine = call;
    }
    const pad = routine !== null ? `${indent}  ` : indent;
    const entry = item.kind === "loop" ? mermaidId("loop", item.id) : mermaidId("step", item.id);
    if (item.kind === "step") out.push(`${pad}${entry}[${label(item.title, item.id)}]`);
    else out.push(`${pad}${entry}{{${label(item.title, item.bound)}}}`);
    for (const e of exits) {
      const text = [e.label, item.condition ? `if ${item.condition}` : undefined]
        .filter(Boolean).join("; ");
      out.push(`${pad}${e.from} -->${text ? `|${label(text)}|` : ""} ${entry}`);
    }
    let after: { from: string; label?: string }[] = [{ from: entry }];
    if (item.kind === "loop") {
      out.push(`${pad}subgraph ${mermaidId("body", item.id)}[${label(`loop ${item.id}`)}]`);
      const ends = draw(item.body, [{ from: entry, label: "iteration" }], out, `${pad}  `);
      out.push(`${pad}end`);
      for (const e of ends) out.push(`${pad}${e.from} -.->|${label("next iteration")}| ${entry}`);
      after = [{ from: entry, label: "done" }];
    } else if (item.delegations) {
      item.delegations.forEach((d, i) => {
        const child = `${entry}_d${i}`;
        out.push(`${pad}${child}[[${label(d.workflowId)}]]`);
        const text = d.condition ? `|${label(`if ${d.condition}`)}|` : "";
        out.push(`${pad}${entry} -.->${text} ${child}`);
      });
    }
    exits = item.condition ? [...after, ...exits.map((e) => ({ ...e, label: "skip" }))] : after;
  }
  if (routine !== null) out.push(`${indent}end`);
  return exits;
}

/** The graph as a Mermaid flowchart (top-down). */
export function mermaidFlowchart(graph: WorkflowGraph): string {
  const out = ["flowchart TD", `  start((${label("start")}))`];
  const exits = draw(graph.items, [{ from: "start" }], out, "  ");
  out.push(`  finish((${label("done")}))`);
  for (const e of exits) {
    out.push(`  ${e.from} -->${e.label ? `|${label(e.label)}|` : ""} finish`);
  }
  return `${out.join("\n")}\n`;
}
