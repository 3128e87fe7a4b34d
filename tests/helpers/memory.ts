/**
 * Engine deps over a libSQL `:memory:` database, for tests of engine behaviour that need a store
 * but no file: the real store (the same SQL, projections and search as a file), the bundled
 * workflows, a fresh keyring, the system clock and randomness.
 * @module
 */
import { createHmac } from "node:crypto";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { Keyring } from "../../engine/access/tokens.ts";
import {
  createWorkflowSource,
  cryptoRandom,
  type OpenedSqlStore,
  openStore,
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

/** A fresh `:memory:` store and engine deps over it that find the bundled workflows. */
export async function memoryDeps(): Promise<{ store: OpenedSqlStore; deps: EngineDeps }> {
  const store = await openStore(":memory:");
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
