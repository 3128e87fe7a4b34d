/**
 * waymark's version, in a module of its own so the command line can say it (and `serve` can
 * start) without loading the library.
 * @module
 */

/** waymark's version. */
export const VERSION = "0.1.0";
