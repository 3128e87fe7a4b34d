/**
 * The token keyring on disk: `keys.json`, mode 0600, holding the current key and, after a
 * rotation, the previous one (so rotation never breaks live runs).
 * @module
 */
import { chmod, link, mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createHmac, randomBytes } from "node:crypto";
import { Buffer } from "node:buffer";
import process from "node:process";
import type { Keyring, SigningKey } from "../engine/mod.ts";

interface KeyFile {
  version: 1;
  current: { id: number; secret: string };
  previous?: { id: number; secret: string };
}

function toKey(entry: { id: number; secret: string }): SigningKey {
  const secret = Buffer.from(entry.secret, "base64url");
  return {
    id: entry.id,
    sign: (data) => new Uint8Array(createHmac("sha256", secret).update(data).digest()),
  };
}

function parseKeyFile(text: string, path: string): Keyring {
  let data: KeyFile;
  try {
    data = JSON.parse(text) as KeyFile;
  } catch {
    throw new Error(
      `${path} is not valid JSON; move it aside to create a new keyring (existing tokens will stop working)`,
    );
  }
  const valid = (e: unknown): e is { id: number; secret: string } =>
    typeof e === "object" && e !== null && Number.isInteger((e as { id: number }).id) &&
    (e as { id: number }).id >= 0 && (e as { id: number }).id <= 0xffffffff &&
    typeof (e as { secret: unknown }).secret === "string" &&
    (e as { secret: string }).secret.length >= 43;
  if (
    data?.version !== 1 || !valid(data.current) ||
    (data.previous !== undefined && !valid(data.previous))
  ) {
    throw new Error(
      `${path} is not a waymark keyring (version 1 with a current key); move it aside to create a new one`,
    );
  }
  const keyring: Keyring = { current: toKey(data.current) };
  if (data.previous) keyring.previous = toKey(data.previous);
  return keyring;
}

/** A new key with a random 32-bit id, so tokens from another installation read as foreign, not tampered. */
function newEntry(avoid?: number): { id: number; secret: string } {
  let id = randomBytes(4).readUInt32BE(0);
  if (id === avoid) id = (id + 1) >>> 0;
  return { id, secret: randomBytes(32).toString("base64url") };
}

async function writeExclusive(path: string, content: string): Promise<boolean> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temp, content, { mode: 0o600 });
  await chmod(temp, 0o600);
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** Loads the keyring at `path`, creating it (atomically, mode 0600) when absent. */
export async function loadOrCreateKeyring(path: string): Promise<Keyring> {
  try {
    return parseKeyFile(await readFile(path, "utf8"), path);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  }
  await mkdir(dirname(path), { recursive: true });
  const file: KeyFile = { version: 1, current: newEntry() };
  // Two processes may race to create it: exactly one link wins; the other reads the winner's.
  await writeExclusive(path, JSON.stringify(file, null, 2) + "\n");
  return parseKeyFile(await readFile(path, "utf8"), path);
}

/** Rotates the keyring: a new current key, the old current kept as previous. */
export async function rotateKeyring(path: string): Promise<Keyring> {
  const text = await readFile(path, "utf8");
  const data = JSON.parse(text) as KeyFile;
  parseKeyFile(text, path);
  const next: KeyFile = {
    version: 1,
    current: newEntry(data.current.id),
    previous: data.current,
  };
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
  return parseKeyFile(await readFile(path, "utf8"), path);
}
