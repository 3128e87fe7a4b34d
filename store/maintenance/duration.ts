/**
 * Ages as people write them (`30d`, `12h`, `2w`, `45m`), for `gc --older-than` and the
 * retention setting of `config.json`, validated by one zod schema.
 * @module
 */
import { z } from "npm:zod@4.6.7";

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** A duration such as `30d`, parsed to milliseconds; `name` is used in the message. */
export function durationSchema(name: string): z.ZodType<number, string> {
  return z.string().regex(
    /^[1-9]\d{0,5}[mhdw]$/,
    `${name} must be a positive whole number (1 or more) and a unit: m (minutes), h, d (days) or w, e.g. 30d`,
  ).transform((text) => Number(text.slice(0, -1)) * UNIT_MS[text.at(-1) as keyof typeof UNIT_MS]);
}
