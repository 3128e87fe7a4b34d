/**
 * The token keyring on disk: `keys.json`, mode 0600, holding the current key and, after a
 * rotation, the previous one (so rotation never breaks live runs). It is read only from a
 * regular file (a FIFO or a device would block the reader forever), and each secret must
 * decode to at least 32 bytes.
 *
 * A process holding the keyring picks up rotations: before signing, at most once a second, it
 * checks whether `keys.json` changed and, if it did, switches to its keys. `keys rotate` waits
 * until the previous rotation is older than that, so every running process has switched to the
 * key the new file keeps as `previous`, and no token a live server signs is refused after the
 * next rotation or a restart.
 * @module
 */
import { chmod, link, mkdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";
import { hmac } from "npm:@noble/hashes@2.4.0/hmac.js";
import { sha256 } from "npm:@noble/hashes@2.4.0/sha2.js";
import { Buffer } from "node:buffer";
import process from "node:process";
import { z } from "npm:zod@4.6.7";
import type { Keyring, SigningKey } from "../engine/access/tokens.ts";
import { formatPath } from "../engine/common/issue_path.ts";

/** The fewest bytes a secret may decode to (what waymark generates: 32 random bytes). */
const MIN_SECRET_BYTES = 32;
/** A keyring is a few hundred bytes; anything far larger is not one. */
const MAX_FILE_BYTES = 64 * 1024;
/** How often, at most, a live keyring looks at its file. */
const RECHECK_MS = 1000;

/** The time a keyring goes by: wall-clock milliseconds, and a way to wait. Tests pass their own. */
export interface KeyringClock {
  /** Milliseconds since the epoch (compared with the file's modification time). */
  now(): number;
  /** Resolves after `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
}

/** The real clock: monotonic within the process, on the wall clock's scale. */
const REAL_CLOCK: KeyringClock = {
  now: () => performance.timeOrigin + performance.now(),
  sleep: (ms) => new Promise((wake) => setTimeout(wake, ms)),
};

const keyEntrySchema = z.object({
  id: z.number().int().min(0).max(0xffffffff),
  secret: z.string().regex(/^[A-Za-z0-9_-]*={0,2}$/, "must be base64url").superRefine(
    (secret, ctx) => {
      const bytes = Buffer.from(secret, "base64url").length;
      if (bytes >= MIN_SECRET_BYTES) return;
      ctx.addIssue({
        code: "custom",
        message: `decodes to ${bytes} bytes; a key needs at least ${MIN_SECRET_BYTES}`,
      });
    },
  ).describe("32 random bytes, base64url."),
});

/** `keys.json`: the current key and, after a rotation, the previous one. */
const keyFileSchema = z.object({
  version: z.literal(1),
  current: keyEntrySchema,
  previous: keyEntrySchema.optional(),
});

type KeyFile = z.infer<typeof keyFileSchema>;

function toKey(entry: { id: number; secret: string }): SigningKey {
  // the key's padded inner and outer states are hashed once; each token then costs two short
  // SHA-256 runs in JavaScript, half what node:crypto's `createHmac` cost a call
  const keyed = hmac.create(sha256, new Uint8Array(Buffer.from(entry.secret, "base64url")));
  return { id: entry.id, sign: (data) => keyed.clone().update(data).digest() };
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

/** What identifies one version of the file: a rotation renames a new file over it. */
type Stamp = string;

/**
 * The text of `path` and its stamp, read only if it is a regular file of keyring size: the
 * file is opened without blocking and checked through that descriptor, so a FIFO (or a file
 * swapped for one) can never hang the reader. Throws ENOENT as is.
 */
function readKeysText(path: string): { text: string; stamp: Stamp } {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) {
      const what = info.isFIFO()
        ? "a FIFO"
        : info.isDirectory()
        ? "a directory"
        : info.isSocket()
        ? "a socket"
        : "a device";
      throw new Error(
        `${path} is ${what}, not a regular file; waymark reads its keyring only from a regular file: move it aside to create a new keyring (existing tokens will stop working)`,
      );
    }
    if (info.size > MAX_FILE_BYTES) {
      throw new Error(
        `${path} is ${info.size} bytes, too large for a waymark keyring (at most ${MAX_FILE_BYTES}); move it aside to create a new one`,
      );
    }
    return { text: readFileSync(fd, "utf8"), stamp: `${info.ino}:${info.size}:${info.mtimeMs}` };
  } finally {
    closeSync(fd);
  }
}

/**
 * A keyring that follows its file: reading `current` looks at the file at most once every
 * {@linkcode RECHECK_MS} and switches to the file's keys when it changed. A file that cannot be
 * read or parsed then keeps the keys in use (the next check tries again).
 */
function liveKeyring(
  path: string,
  first: { keyring: Keyring; stamp: Stamp; clock: KeyringClock },
): Keyring {
  let { keyring, stamp } = first;
  let checkedAt = first.clock.now();
  const refresh = () => {
    const now = first.clock.now();
    if (now - checkedAt < RECHECK_MS) return;
    checkedAt = now;
    try {
      const info = statSync(path);
      if (`${info.ino}:${info.size}:${info.mtimeMs}` === stamp) return;
      const read = readKeysText(path);
      keyring = parseKeyFile(read.text, path);
      stamp = read.stamp;
    } catch { /* keep signing with the keys in use */ }
  };
  return {
    get current() {
      refresh();
      return keyring.current;
    },
    // Not refreshed: it belongs to the `current` read just before (see verifyToken).
    get previous() {
      return keyring.previous;
    },
  };
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

function loadLive(path: string, clock: KeyringClock): Keyring {
  const read = readKeysText(path);
  return liveKeyring(path, { keyring: parseKeyFile(read.text, path), stamp: read.stamp, clock });
}

/**
 * Reads the keyring at `path` as it is now, changing nothing: `null` when there is none (a
 * home where waymark never served). For readers that mint a token and exit (`waymark hook`).
 */
export function readKeyring(path: string): Keyring | null {
  try {
    return parseKeyFile(readKeysText(path).text, path);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Loads the keyring at `path`, creating it (atomically, mode 0600) when absent. The keyring
 * returned follows the file: rotations reach it within a second (of `options.clock`).
 */
export async function loadOrCreateKeyring(
  path: string,
  options: { clock?: KeyringClock } = {},
): Promise<Keyring> {
  const clock = options.clock ?? REAL_CLOCK;
  try {
    return loadLive(path, clock);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  }
  await mkdir(dirname(path), { recursive: true });
  const file: KeyFile = { version: 1, current: newEntry() };
  // Two processes may race to create it: exactly one link wins; the other reads the winner's.
  await writeExclusive(path, JSON.stringify(file, null, 2) + "\n");
  return loadLive(path, clock);
}

/**
 * Rotates the keyring: a new current key, the old current kept as previous. When the last
 * rotation is less than two checks old, it first waits, so every live keyring has switched to
 * the key this rotation keeps as previous (waiting on `options.clock`).
 */
export async function rotateKeyring(
  path: string,
  options: { clock?: KeyringClock } = {},
): Promise<Keyring> {
  const clock = options.clock ?? REAL_CLOCK;
  const age = clock.now() - (await stat(path)).mtimeMs;
  let data = readKeyFile(readKeysText(path).text, path);
  if (data.previous && age >= 0 && age < 2 * RECHECK_MS) {
    await clock.sleep(2 * RECHECK_MS - age);
    data = readKeyFile(readKeysText(path).text, path);
  }
  const next: KeyFile = {
    version: 1,
    current: newEntry(data.current.id),
    previous: data.current,
  };
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
  return parseKeyFile(readKeysText(path).text, path);
}

/** One thing wrong with a keyring file: what kind, and in words. */
export interface KeyringProblem {
  /** `missing`: no file; `unreadable`: not a keyring (or not readable); `mode`: readable by others. */
  kind: "missing" | "unreadable" | "mode";
  /** What was found, naming the file. */
  message: string;
}

/**
 * What is wrong with the keyring at `path`, without creating or changing it: missing, not a
 * keyring (with the reason), or readable by others than its owner. Empty when sound.
 */
export async function inspectKeyring(path: string): Promise<KeyringProblem[]> {
  let text: string;
  try {
    text = readKeysText(path).text;
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") {
      return [{ kind: "missing", message: `${path} does not exist` }];
    }
    const message = (error as Error).message;
    return [{
      kind: "unreadable",
      message: message.startsWith(path) ? message : `${path} cannot be read: ${message}`,
    }];
  }
  const problems: KeyringProblem[] = [];
  try {
    readKeyFile(text, path);
  } catch (error) {
    problems.push({ kind: "unreadable", message: (error as Error).message });
  }
  const mode = (await stat(path)).mode & 0o777;
  if (process.platform !== "win32" && mode !== 0o600) {
    problems.push({
      kind: "mode",
      message: `${path} has mode ${mode.toString(8).padStart(4, "0")}; it must be 0600`,
    });
  }
  return problems;
}
