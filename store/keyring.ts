/**
 * The token keyring on disk: `keys.json`, mode 0600, holding the current key and, after a
 * rotation, the previous one (so rotation never breaks live runs).
 * @module
 */
import { chmod, link, mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createHmac, randomBytes } from "node:crypto";
import { Buffer } from "node:buffer";
import process from "node:process";
import { z } from "npm:zod@4.6.7";
import { formatPath, type Keyring, type SigningKey } from "../engine/mod.ts";

const keyEntrySchema = z.object({
  id: z.number().int().min(0).max(0xffffffff),
  secret: z.string().min(43).describe("32 random bytes, base64url."),
});

/** `keys.json`: the current key and, after a rotation, the previous one. */
const keyFileSchema = z.object({
  version: z.literal(1),
  current: keyEntrySchema,
  previous: keyEntrySchema.optional(),
});

type KeyFile = z.infer<typeof keyFileSchema>;

function toKey(entry: { id: number; secret: string }): SigningKey {
  const secret = Buffer.from(entry.secret, "base64url");
  return {
    id: entry.id,
    sign: (data) => new Uint8Array(createHmac("sha256", secret).update(data).digest()),
  };
}

function readKeyFile(text: string, path: string): KeyFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(
      `${path} is not valid JSON; move it aside to create a new keyring (existing tokens will stop working)`,
    );
  }
  const parsed = keyFileSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      `${formatPath(i.path) || "(file)"}: ${i.message}`
    );
    throw new Error(
      `${path} is not a waymark keyring (version 1 with a current key; ${
        problems.join("; ")
      }); move it aside to create a new one`,
    );
  }
  return parsed.data;
}

function parseKeyFile(text: string, path: string): Keyring {
  const data = readKeyFile(text, path);
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
  const data = readKeyFile(await readFile(path, "utf8"), path);
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

/**
 * What is wrong with the keyring at `path`, without creating or changing it: missing, not a
 * keyring (with the reason), or readable by others than its owner. Empty when sound.
 */
export async function inspectKeyring(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return (error as { code?: string }).code === "ENOENT"
      ? [`${path} does not exist (waymark creates it the next time it opens this home)`]
      : [`${path} cannot be read: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  try {
    readKeyFile(text, path);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const mode = (await stat(path)).mode & 0o777;
  if (process.platform !== "win32" && mode !== 0o600) {
    problems.push(`${path} has mode ${mode.toString(8).padStart(4, "0")}; it must be 0600`);
  }
  return problems;
}
