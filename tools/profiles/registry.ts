/**
 * Every tool profile a server can serve, by name (written here once): what a client sees of it
 * before any call, its published face, generated from its tools by `deno task schema` into
 * `<name>_listing.json` (a test keeps each file equal to its tools). A server answers the
 * handshake and `tools/list` of any profile from these files while the engine loads
 * (`early_server.ts`); its tools are built once loaded (`PROFILE_TOOLS` in `tools.ts`).
 * This module loads nothing of the engine.
 * @module
 */
import type { Tool } from "npm:@modelcontextprotocol/server@2.4.0";
import type { PublishedSchemas } from "../calls/define_tool.ts";
import defaultListing from "./default_listing.json" with { type: "json" };
import deepworkListing from "./deepwork_listing.json" with { type: "json" };

/** One tool as `tools/list` shows it (with `execution`), and the server option that lists it. */
export type PublishedTool = Tool & { flag?: "startSession" };

/** What a client sees of a profile before any call: its name, instructions and tools. */
export interface PublishedProfile {
  /** The server's name sent at initialize (`serverInfo.name`); default `waymark`. */
  serverName?: string;
  /** Sent at initialize. */
  instructions: string;
  /** Every tool, flagged ones too, in the order clients list them. */
  tools: PublishedTool[];
}

/** Every profile's published face, by name. */
export const PROFILES = {
  default: defaultListing as unknown as PublishedProfile,
  deepwork: deepworkListing as unknown as PublishedProfile,
} as const;

/** A profile's name. */
export type ProfileName = keyof typeof PROFILES;

/** Every profile's name, the default first. */
export const PROFILE_NAMES = Object.keys(PROFILES) as [ProfileName, ...ProfileName[]];

/** What decides which of a profile's tools a server lists. */
export interface ListingOptions {
  /** List `start_session` (the `startSession` flag). */
  enableStartSession?: boolean;
}

/** Whether a server lists `tool`: an unflagged one always, a flagged one when its option is on. */
export function isListed(tool: { flag?: "startSession" }, options: ListingOptions): boolean {
  return !tool.flag || (tool.flag === "startSession" && options.enableStartSession === true);
}

/** The published JSON Schemas of a profile's tools, by name (so `tools/list` converts nothing). */
export function publishedSchemas(
  profile: PublishedProfile,
): Readonly<Record<string, PublishedSchemas>> {
  return Object.fromEntries(
    profile.tools.map((
      t,
    ) => [t.name, { inputSchema: t.inputSchema, outputSchema: t.outputSchema }]),
  ) as Record<string, PublishedSchemas>;
}
