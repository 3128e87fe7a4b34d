/**
 * The files agents name as outputs, inside the workspace root: resolved against it, refused
 * when they leave it (symlinks included), described by size and SHA-256 (read a chunk at a time
 * into one buffer, so memory stays flat whatever the size), read for `json_schema` and external reviews, and the
 * self-review instructions written under it, never through a link that leaves it.
 * @module
 */
import { createHash } from "node:crypto";
import { lstat, mkdir, open, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import type { FileRefusal, WorkspaceFiles } from "../../../engine/deepwork/ports.ts";

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** The absolute path of `path` under `root`, or why it cannot be used. */
async function locate(
  root: string,
  path: string,
): Promise<{ ok: true; abs: string } | { ok: false; reason: FileRefusal }> {
  if (path.trim() === "") return { ok: false, reason: "empty" };
  const base = resolve(root);
  const abs = isAbsolute(path) ? resolve(path) : resolve(base, path);
  if (abs === base) return { ok: false, reason: "not_a_file" };
  if (!inside(base, abs)) return { ok: false, reason: "outside" };
  let real: string;
  try {
    real = await realpath(abs);
  } catch {
    return { ok: false, reason: "missing" };
  }
  const realRoot = await realpath(base).catch(() => base);
  if (!inside(realRoot, real)) return { ok: false, reason: "outside" };
  return { ok: true, abs: real };
}

/** Bytes read at a time while hashing: one buffer, reused, so memory stays flat. */
const CHUNK = 1024 * 1024;

/** SHA-256 of a file read a chunk at a time into one buffer, or `null` when it cannot be read. */
async function streamHash(abs: string): Promise<string | null> {
  try {
    const handle = await open(abs, "r");
    try {
      const hash = createHash("sha256");
      const buffer = new Uint8Array(CHUNK);
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
        if (bytesRead === 0) return hash.digest("hex");
        hash.update(buffer.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/** The real folder `dir` will be once made: refused (`null`) when it, or a link on the way, leaves `root`. */
async function safeFolder(root: string, dir: string): Promise<string | null> {
  const realRoot = await realpath(root).catch(() => null);
  if (realRoot === null) return null;
  let at = realRoot;
  for (const part of relative(resolve(root), dir).split(sep).filter((p) => p !== "")) {
    const next = `${at}${sep}${part}`;
    const info = await lstat(next).catch(() => null);
    if (info === null) {
      await mkdir(next);
      at = next;
      continue;
    }
    const real = await realpath(next);
    if (!inside(realRoot, real) || !(await stat(real)).isDirectory()) return null;
    at = real;
  }
  return at;
}

/** Workspace files on the local disk. */
export const diskFiles: WorkspaceFiles = {
  async describe(root, path, { hashUpTo }) {
    const found = await locate(root, path);
    if (!found.ok) return found;
    const info = await stat(found.abs).catch(() => null);
    if (!info) return { ok: false, reason: "missing" };
    if (!info.isFile()) return { ok: false, reason: "not_a_file" };
    if (info.size > hashUpTo) {
      return {
        ok: true,
        facts: { path, size: info.size, sha256: null, modified: info.mtime.toISOString() },
      };
    }
    const sha256 = await streamHash(found.abs);
    if (sha256 === null) return { ok: false, reason: "unreadable" };
    return { ok: true, facts: { path, size: info.size, sha256 } };
  },
  async readText(root, path, maxBytes) {
    const found = await locate(root, path);
    if (!found.ok) return null;
    try {
      const handle = await open(found.abs, "r");
      try {
        const buffer = new Uint8Array(maxBytes);
        const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
        return new TextDecoder().decode(buffer.subarray(0, bytesRead));
      } finally {
        await handle.close();
      }
    } catch {
      return null;
    }
  },
  async writeText(root, path, text) {
    const abs = resolve(root, path);
    try {
      const folder = await safeFolder(root, dirname(abs));
      if (folder === null) return null;
      const target = `${folder}${sep}${abs.slice(dirname(abs).length + 1)}`;
      const existing = await lstat(target).catch(() => null);
      if (existing && !existing.isFile()) return null;
      const handle = await open(target, "w");
      try {
        await handle.writeFile(text, "utf8");
      } finally {
        await handle.close();
      }
      return target;
    } catch {
      return null;
    }
  },
};
