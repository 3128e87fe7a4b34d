/**
 * Summarises a V8 CPU profile (`deno run --cpu-prof`, or `deno task bench --cpu-prof DIR`): self
 * time by package or file and by function, optionally only over the samples taken while a given
 * function was on the stack (`--within continueWorkflow` for the advance path).
 *
 *   deno run -A tests/bench/cpu_profile.ts PROFILE.cpuprofile [--within NAME] [--top N]
 * @module
 */
import { parseArgs } from "node:util";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time (ms) by package/file and by function. */
export function summarise(
  profile: Profile,
  within?: string,
): { totalMs: number; byFile: Map<string, number>; byFunction: Map<string, number> } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const onStack = new Map<number, boolean>();
  const inside = (id: number): boolean => {
    if (!within) return true;
    const known = onStack.get(id);
    if (known !== undefined) return known;
    const up = parent.get(id);
    const yes = nodes.get(id)!.callFrame.functionName === within ||
      (up !== undefined && inside(up));
    onStack.set(id, yes);
    return yes;
  };
  const short = (url: string) =>
    url.replace(/^.*registry\.npmjs\.org\/((?:@[^/]+\/)?[^/]+)\/[^/]+\/.*$/, "npm:$1")
      .replace(/^file:\/\/.*?\/((?:engine|store|tools|web|workflows)\/.*)$/, "$1");
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    if (!inside(id)) return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const frame = nodes.get(id)!.callFrame;
    const file = short(frame.url) || "(native)";
    total += ms;
    byFile.set(file, (byFile.get(file) ?? 0) + ms);
    const fn = `${frame.functionName || "(anonymous)"}  ${file}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  });
  return { totalMs: total, byFile, byFunction };
}

function top(map: Map<string, number>, n: number, total: number): string {
  return [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, ms]) =>
    `${ms.toFixed(1).padStart(9)} ms ${(100 * ms / total).toFixed(1).padStart(5)}%  ${k}`
  ).join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { within: { type: "string" }, top: { type: "string" } },
  });
  const n = Number(values.top ?? 25);
  for (const file of positionals) {
    const s = summarise(JSON.parse(await Deno.readTextFile(file)), values.within);
    console.log(
      `${file}: ${s.totalMs.toFixed(1)} ms${values.within ? ` within ${values.within}` : ""}`,
    );
    console.log(`\nby package / file:\n${top(s.byFile, n, s.totalMs)}`);
    console.log(`\nby function:\n${top(s.byFunction, n, s.totalMs)}\n`);
  }
}
