/**
 * Engine deps over the in-memory store, for tests of engine behaviour that need a store but no
 * database: the bundled workflows, a fresh in-memory keyring, the system clock and randomness.
 * @module
 */
import { createHmac } from "node:crypto";
import type { EngineDeps, Keyring } from "../../engine/mod.ts";
import {
  createWorkflowSource,
  cryptoRandom,
  type MemoryStore,
  openMemoryStore,
  systemClock,
} from "../../store/mod.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

/** A keyring whose one key signs with real HMAC-SHA-256 under a fresh secret. */
export function testKeyring(): Keyring {
  const secret = cryptoRandom.bytes(32);
  return {
    current: {
      id: 1,
      sign: (data) => new Uint8Array(createHmac("sha256", secret).update(data).digest()),
    },
  };
}

/** A fresh in-memory store and engine deps over it that find the bundled workflows. */
export function memoryDeps(): { store: MemoryStore; deps: EngineDeps } {
  const store = openMemoryStore();
  return {
    store,
    deps: {
      store,
      workflows: createWorkflowSource(BUNDLED_WORKFLOWS, []),
      keyring: testKeyring(),
      clock: systemClock,
      random: cryptoRandom,
    },
  };
}
