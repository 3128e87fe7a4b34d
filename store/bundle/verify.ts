/**
 * Verifying a bundle before anything is written: it parses, its version is readable, its shape
 * is version 1's, every digest matches (each part, the whole, each event), the events are
 * numbered in order with none missing, they hang together (one session, runs started before
 * they are used, nodes after their parents), the snapshots are exactly those the runs pin and
 * each matches its hash, no token is inside, and the session satisfies every rule a session built
 * over MCP satisfies (`engine/model/session_rules.ts`). Nesting is checked first, without recursion,
 * so a hostile depth is refused with the limit before anything recursive reads it.
 * @module
 */
import { hashJson } from "../../engine/common/hash.ts";
import { ID_HEX } from "../../engine/model/ids.ts";
import { nestingProblem, sessionRuleViolation } from "../../engine/model/session_rules.ts";
import { tokenPattern } from "../../engine/access/tokens.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";
import { formatPath } from "../../engine/common/issue_path.ts";
import {
  type Bundle,
  type BundleResult,
  bundleSchema,
  canonicalDigest,
  eventDigest,
  refuse,
  wholeDigest,
} from "./bundle_format.ts";
import { pinnedHashes } from "./export.ts";
import { upgradeBundle, type UpgradeOptions } from "./upgrade.ts";

function parseJson(text: string): BundleResult<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return refuse(
      "BUNDLE_INVALID",
      `The bundle is not valid JSON (${
        (error as Error).message
      }); it may be truncated or damaged. Export it again.`,
    );
  }
}

/** Each part's digest, then the whole's: which part changed, or a changed manifest. */
function checkManifest(bundle: Bundle): string | null {
  const { parts, whole } = bundle.manifest;
  for (const part of ["session", "events", "snapshots"] as const) {
    const actual = canonicalDigest(bundle[part]);
    if (actual !== parts[part]) {
      return `its ${part} part does not match the manifest (sha256 ${actual}, manifest ${
        parts[part]
      })`;
    }
  }
  const actual = wholeDigest(parts, bundle.bundleSchemaVersion);
  return actual === whole
    ? null
    : `its manifest's whole digest does not match (sha256 ${actual}, manifest ${whole})`;
}

/** Events numbered 1… in order, none missing, each with its digest, as many as the summary says. */
function checkNumbering(bundle: Bundle): string | null {
  for (const [i, event] of bundle.events.entries()) {
    if (event.n !== i + 1) {
      return `event ${i + 1} is numbered ${event.n}: events were removed or reordered`;
    }
    if (eventDigest(event) !== event.digest) return `event ${event.n} fails its digest check`;
  }
  return bundle.session.eventCount === bundle.events.length
    ? null
    : `it holds ${bundle.events.length} events where its summary says ${bundle.session.eventCount}`;
}

/** One session, opened by the first event; the summary agrees with the events. */
function checkSession(bundle: Bundle): string | null {
  const { session, events } = bundle;
  const first = events[0]!;
  if (first.kind !== "session_created") return "its first event is not session_created";
  if (first.payload.title !== session.title) return "its title differs from its first event's";
  if (first.at !== session.firstAt || events[events.length - 1]!.at !== session.lastAt) {
    return "its first or last event time differs from its summary";
  }
  for (const event of events) {
    if (event.payload.kind !== event.kind) return `event ${event.n}'s payload is of another kind`;
    if (event.payload.sessionId !== session.sessionId) {
      return `event ${event.n} belongs to another session`;
    }
  }
  return null;
}

/** Runs are started before anything else names them; nodes come after their parents. */
function checkRuns(bundle: Bundle): string | null {
  const nodes = new Map<string, Set<string>>();
  for (const { n, kind, payload } of bundle.events) {
    const runId = payload.runId;
    if (runId === undefined) continue;
    if (typeof runId !== "string" || !ID_HEX.test(runId)) return `event ${n} has a bad run id`;
    if (kind === "run_started") {
      if (nodes.has(runId)) return `event ${n} starts run ${runId} a second time`;
      nodes.set(runId, new Set());
      continue;
    }
    const known = nodes.get(runId);
    if (!known) return `event ${n} (${kind}) comes before its run started: events were reordered`;
    if (kind !== "node_created") continue;
    const parent = payload.parentId;
    if (parent !== null && !known.has(String(parent))) {
      return `event ${n} creates a node before its parent: events were reordered`;
    }
    known.add(String(payload.nodeId));
  }
  return null;
}

/** Exactly the snapshots the runs pin, each matching its hash and naming its workflow. */
async function checkSnapshots(bundle: Bundle): Promise<string | null> {
  const pinned = pinnedHashes(bundle.events);
  const carried = bundle.snapshots.map((s) => s.workflowHash);
  if (JSON.stringify(carried) !== JSON.stringify(pinned)) {
    return `its snapshots (${carried.join(", ") || "none"}) are not those its runs pin (${
      pinned.join(", ") || "none"
    })`;
  }
  for (const snapshot of bundle.snapshots) {
    if (await hashJson(snapshot.compiled) !== snapshot.workflowHash) {
      return `the snapshot filed as ${snapshot.workflowHash} does not match its hash`;
    }
    if (snapshot.compiled.id !== snapshot.workflowId) {
      return `the snapshot ${snapshot.workflowHash} names another workflow`;
    }
  }
  return null;
}

function checkNoTokens(bundle: Bundle): string | null {
  for (const event of bundle.events) {
    if (tokenPattern().test(JSON.stringify(event.payload))) {
      return `event ${event.n} holds a token (bundles never carry tokens)`;
    }
  }
  return null;
}

/** Every payload and snapshot nested no deeper than the caps allow. */
function checkNesting(bundle: Bundle): string | null {
  for (const event of bundle.events) {
    const problem = nestingProblem(event.payload);
    if (problem) return `event ${event.n} (${event.kind}) ${problem}`;
  }
  const deep = bundle.snapshots.find((s) => nestingProblem({ compiled: s.compiled }));
  return deep ? `the snapshot ${deep.workflowHash} is nested too deep` : null;
}

/** The session against the rules every session built over MCP satisfies. */
function checkRules(bundle: Bundle, now: string): string | null {
  const workflows = new Map(
    bundle.snapshots.map((s) => [s.workflowHash, s.compiled as unknown as CompiledWorkflow]),
  );
  return sessionRuleViolation(bundle.events, workflows, { now })?.message ?? null;
}

/** The checks of a shaped bundle, in order; the first failure is the reason. */
async function firstProblem(bundle: Bundle, now: string): Promise<string | null> {
  return checkNesting(bundle) ?? checkManifest(bundle) ?? checkNumbering(bundle) ??
    checkSession(bundle) ?? checkRuns(bundle) ?? checkNoTokens(bundle) ??
    await checkSnapshots(bundle) ?? checkRules(bundle, now);
}

/** Options of {@linkcode verifyBundle}. */
export interface VerifyOptions extends UpgradeOptions {
  /** The time now (ISO-8601): no event may be dated later (beyond clock skew). */
  now: string;
}

/** A bundle's text verified whole (upgraded when older), or the reason it is refused. */
export async function verifyBundle(
  text: string,
  options: VerifyOptions,
): Promise<BundleResult<Bundle>> {
  const json = parseJson(text);
  if (!json.ok) return json;
  const upgraded = upgradeBundle(json.value, options);
  if (!upgraded.ok) return upgraded;
  const shaped = bundleSchema.safeParse(upgraded.value);
  if (!shaped.success) {
    const issue = shaped.error.issues[0]!;
    return refuse(
      "BUNDLE_INVALID",
      `The bundle is not a well-formed version-1 bundle: ${
        formatPath(issue.path) || "(file)"
      } ${issue.message}.`,
    );
  }
  const problem = await firstProblem(shaped.data, options.now);
  if (problem) {
    return refuse("BUNDLE_INVALID", `The bundle was refused: ${problem}. Nothing was written.`);
  }
  return { ok: true, value: shaped.data };
}
