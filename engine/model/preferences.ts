/**
 * Preferences: a closed set of typed values, recorded on every node and inherited by its
 * descendants, so an old token replays with the preferences of its time.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { AUTONOMY_LEVELS, RISK_POLICIES } from "./vocabulary.ts";

/** How far the agent may go without the user. */
export const autonomySchema = z.enum(AUTONOMY_LEVELS);
/** How much risk the agent may take. */
export const riskPolicySchema = z.enum(RISK_POLICIES);

/** A full preference snapshot. */
export const preferencesSchema = z.object({
  autonomy: autonomySchema,
  riskPolicy: riskPolicySchema,
}).strict();

/** Preferences a caller may set; missing fields keep their current value. */
export const preferencesPatchSchema = preferencesSchema.partial();

/** A full preference snapshot. */
export type Preferences = z.infer<typeof preferencesSchema>;
/** A partial change to preferences. */
export type PreferencesPatch = z.infer<typeof preferencesPatchSchema>;

/** The built-in defaults, used when no global defaults are configured. */
export const DEFAULT_PREFERENCES: Preferences = { autonomy: "guided", riskPolicy: "conservative" };

/** Applies a patch; returns the same object when nothing changes. */
export function applyPreferences(
  base: Preferences,
  patch: PreferencesPatch | undefined,
): Preferences {
  if (!patch) return base;
  const next: Preferences = {
    autonomy: patch.autonomy ?? base.autonomy,
    riskPolicy: patch.riskPolicy ?? base.riskPolicy,
  };
  return next.autonomy === base.autonomy && next.riskPolicy === base.riskPolicy ? base : next;
}

// The lists run from least to most automation (or risk), so a position is a rank.
const above = (list: readonly string[], chosen: string, max: string): boolean =>
  list.includes(max) && list.indexOf(chosen) > list.indexOf(max);

/** Warnings when the chosen preferences go past what a workflow recommends. Never a refusal. */
export function recommendationWarnings(
  chosen: Preferences,
  recommended: { autonomy?: string; riskPolicy?: string } | undefined,
): { code: string; message: string }[] {
  const warnings: { code: string; message: string }[] = [];
  const maxAutonomy = recommended?.autonomy;
  if (maxAutonomy && above(AUTONOMY_LEVELS, chosen.autonomy, maxAutonomy)) {
    warnings.push({
      code: "PREFERENCE_ABOVE_RECOMMENDED",
      message:
        `autonomy \`${chosen.autonomy}\` is more than this workflow recommends (\`${maxAutonomy}\`); it will run, but consider \`${maxAutonomy}\`.`,
    });
  }
  const maxRisk = recommended?.riskPolicy;
  if (maxRisk && above(RISK_POLICIES, chosen.riskPolicy, maxRisk)) {
    warnings.push({
      code: "PREFERENCE_ABOVE_RECOMMENDED",
      message:
        `riskPolicy \`${chosen.riskPolicy}\` is more than this workflow recommends (\`${maxRisk}\`); it will run, but consider \`${maxRisk}\`.`,
    });
  }
  return warnings;
}
