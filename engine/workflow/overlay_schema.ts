/**
 * The overlay file format: a workflow of its own id made by layering changes over another
 * workflow (its `base`, optionally pinned to the base's hash it was written against) instead of
 * copying it. Files are named `*.overlay.json` or `*.overlay.jsonc` in the workflow folders.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { stepSchema } from "./schema.ts";

const stepId = z.string().min(1).describe("The id of a step of the base (or of a loop body).");

/** One change an overlay makes to its base. */
export const overlayChangeSchema = z.union([
  z.strictObject({ insertBefore: stepId, steps: z.array(stepSchema).min(1) }),
  z.strictObject({ insertAfter: stepId, steps: z.array(stepSchema).min(1) }),
  z.strictObject({ replace: stepId, step: stepSchema }),
  z.strictObject({ remove: stepId }),
  z.strictObject({
    appendPrompt: stepId,
    text: z.string().min(1).describe("Appended to the step's prompt, after a blank line."),
  }),
]).meta({ id: "overlayChange" });

/** A whole overlay file. */
export const overlayFileSchema = z.strictObject({
  $schema: z.string().optional(),
  id: z.string().min(1).describe("The combined workflow's own id."),
  name: z.string().min(1).optional().describe("Default: the base's."),
  description: z.string().min(1).optional().describe("Default: the base's."),
  version: z.string().min(1).optional().describe("Default: the base's."),
  overlay: z.strictObject({
    base: z.string().min(1).describe("The id of the workflow (or overlay) this one layers over."),
    baseHash: z.string().regex(/^sha256:[0-9a-f]{64}$/).optional().describe(
      "The base's workflowHash this overlay was written against; a different one is reported.",
    ),
    changes: z.array(overlayChangeSchema).min(1).max(100).describe("Applied in order."),
  }),
}).meta({ id: "overlay" });

/** A validated overlay file. */
export type OverlayFile = z.infer<typeof overlayFileSchema>;
/** One change of an overlay. */
export type OverlayChange = z.infer<typeof overlayChangeSchema>;

/** Where each step of a combined workflow came from, and the layers it was made of. */
export interface OverlayLayers {
  /** Base first, then each overlay: id and file. */
  layers: { workflowId: string; file: string }[];
  /** Step id → the workflow it comes from (`a, prompt appended by b` when both). */
  origins: Record<string, string>;
  /** The base's current hash. */
  baseHash: string;
  /** The hash the overlay was written against, when it says and it differs. */
  writtenAgainst?: string;
}

/** Whether a file name is an overlay's. */
export function isOverlayName(name: string): boolean {
  return /\.overlay\.jsonc?$/.test(name);
}
