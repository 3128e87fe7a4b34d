/**
 * Forging session bundles for tests: a bundle's text edited and made consistent again (every
 * event's digest, the summary and the manifest), as an attacker who knows the format would.
 * @module
 */
import type { Bundle } from "../../store/bundle/mod.ts";
import type { BundleEvent } from "../../store/bundle/bundle_format.ts";
import { bundleText, eventDigest, seal } from "../../store/bundle/bundle_format.ts";

/** The bundle parsed, changed by `edit`, then every digest, count and time sealed again. */
export function forged(text: string, edit: (b: Bundle) => void): string {
  const bundle = JSON.parse(text) as Bundle;
  edit(bundle);
  bundle.events.forEach((e) => void (e.digest = eventDigest(e)));
  bundle.session = {
    ...bundle.session,
    title: String(bundle.events[0]!.payload.title),
    eventCount: bundle.events.length,
    firstAt: bundle.events[0]!.at,
    lastAt: bundle.events.at(-1)!.at,
  };
  bundle.manifest = seal(bundle);
  return bundleText(bundle);
}

/** The bundle's `i`th event of `kind` (from 0). */
export function eventOf(b: Bundle, kind: string, i = 0): BundleEvent {
  const found = b.events.filter((e) => e.kind === kind)[i];
  if (!found) throw new Error(`the bundle has no ${kind} #${i}`);
  return found;
}

/** A JSON value nested `depth` levels deep. */
export function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) value = { deeper: value };
  return value;
}
