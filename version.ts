/**
 * waymark's version, in a module of its own so the command line can say it (and `serve` can
 * start) without loading the library. Defined once, as `deno.json`'s `version` (which `deno
 * bump-version` updates), and read from it by a static JSON import, so every build carries it.
 * @module
 */
import config from "./deno.json" with { type: "json" };

/** waymark's version. */
export const VERSION: string = config.version;
