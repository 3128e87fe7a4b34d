/**
 * Measures importing a session bundle of N runs whose ids are all taken here (so every id is
 * re-keyed), while another process records a checkpoint every 20 ms: the import's wall time,
 * and the slowest checkpoint and how many were refused as busy. Not a test; run by hand:
 * `deno run -A scripts/measure_import.ts 1000 4000 16000`.
 * @module
 */
import { openWaymark } from "../mod.ts";
import { type Bundle, exportSession, importBundle } from "../store/bundle/mod.ts";
import { bundleText, eventDigest, seal } from "../store/bundle/bundle_format.ts";

const CHECKPOINTER = `
const [home, stop, mod] = Deno.args;
const { openWaymark } = await import(mod);
const wm = await openWaymark({ home, dbUrl: "file:" + home + "/waymark.db", workspace: home });
const started = await wm.start({ workflowId: "waymark.code_review", goal: "live" });
if (!started.ok) throw new Error(JSON.stringify(started));
let { stateToken, checkpointToken } = started.value;
let worst = 0, busy = 0, count = 0;
for (;;) {
  try { await Deno.stat(stop); break; } catch { /* keep going */ }
  const t = performance.now();
  const r = await wm.checkpoint({ stateToken, checkpointToken, output: { notesMarkdown: "tick" } });
  worst = Math.max(worst, performance.now() - t);
  count += 1;
  if (r.ok) ({ stateToken, checkpointToken } = r.value);
  else if (r.error.code === "STORAGE_BUSY") busy += 1;
  else throw new Error(JSON.stringify(r.error));
  await new Promise((ok) => setTimeout(ok, 20));
}
await wm.close();
console.log(JSON.stringify({ worst: Math.round(worst), busy, count }));
`;

/** A bundle of one session with `runs` copies of a started run, each under its own run id. */
async function bundleOf(runs: number): Promise<string> {
  const home = await Deno.makeTempDir();
  const wm = await openWaymark({ home, dbUrl: `file:${home}/waymark.db`, workspace: home });
  const started = await wm.start({ workflowId: "waymark.code_review", goal: "many runs" });
  if (!started.ok) throw new Error(started.error.message);
  const text = await exportSession(wm, started.value.session!.sessionId);
  await wm.close();
  await Deno.remove(home, { recursive: true });
  if (!text.ok) throw new Error(text.error.message);
  const bundle = JSON.parse(text.value.text) as Bundle;
  const [first, ...run] = bundle.events;
  const runId = String(run[0]!.payload.runId);
  const events = [first!];
  for (let i = 0; i < runs; i++) {
    const id = (BigInt("0x1000000000000000") + BigInt(i) * 7919n).toString(16);
    for (const e of run) {
      const payload = JSON.parse(JSON.stringify(e.payload).replaceAll(runId, id));
      if (i > 0 && e.kind === "workflow_pinned") payload.compiled = null;
      events.push({ ...e, payload });
    }
  }
  events.forEach((e, k) => {
    e.n = k + 1;
    e.digest = eventDigest(e);
  });
  bundle.events = events;
  bundle.session = { ...bundle.session, eventCount: events.length, lastAt: events.at(-1)!.at };
  bundle.manifest = seal(bundle);
  return bundleText(bundle);
}

if (Deno.args[0] === "--write") {
  await Deno.writeTextFile(Deno.args[2]!, await bundleOf(Number(Deno.args[1])));
  Deno.exit(0);
}

for (const runs of Deno.args.map(Number)) {
  const text = await bundleOf(runs);
  const home = await Deno.makeTempDir();
  const wm = await openWaymark({ home, dbUrl: `file:${home}/waymark.db`, workspace: home });
  const first = await importBundle(wm, text);
  if (!first.ok) throw new Error(first.error.message);
  // the same ids under another digest: every id is taken, so all are re-keyed
  const b = JSON.parse(text) as Bundle;
  b.session.title = b.events[0]!.payload.title = "many runs, again";
  b.events[0]!.digest = eventDigest(b.events[0]!);
  b.manifest = seal(b);
  const stop = `${home}/stop`;
  const script = `${home}/checkpointer.ts`;
  await Deno.writeTextFile(script, CHECKPOINTER);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", script, home, stop, new URL("../mod.ts", import.meta.url).href],
    stdout: "piped",
  }).spawn();
  await new Promise((ok) => setTimeout(ok, 1500));
  const t = performance.now();
  const second = await importBundle(wm, bundleText(b));
  const ms = Math.round(performance.now() - t);
  await new Promise((ok) => setTimeout(ok, 300));
  await Deno.writeTextFile(stop, "");
  const live = new TextDecoder().decode((await child.output()).stdout).trim();
  await wm.close();
  await Deno.remove(home, { recursive: true });
  const rekeyed = second.ok && second.value.rekeyed;
  console.log(JSON.stringify({ runs, events: b.events.length, importMs: ms, rekeyed, live }));
  if (!second.ok) console.log(second.error);
}
