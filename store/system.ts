/**
 * The runtime's clock and randomness, handed to the engine through its ports; the store reads
 * the same clock when it is handed none.
 * @module
 */
import type { Clock, Random } from "../engine/model/ports.ts";

/** Wall-clock time. */
export const systemClock: Clock = { now: () => new Date().toISOString() };

/** Cryptographic randomness from WebCrypto. */
export const cryptoRandom: Random = {
  bytes: (n) => crypto.getRandomValues(new Uint8Array(n)),
};
