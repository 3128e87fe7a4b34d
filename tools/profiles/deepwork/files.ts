/**
 * The files agents name as outputs, inside the workspace root: resolved against it, refused
 * when they leave it (symlinks included), described by size and SHA-256, read for
 * `json_schema` and external reviews, and the self-review instructions written under it.
 * @module
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, realpath, stat, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { FileRefusal, WorkspaceFiles } from "../../../engine/mod.ts";

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** The absolute path of `path` under `root`, or why it cannot be used. */
async function locate(
  root: string,
  path: string,
): Promise<{ ok: true; abs: string } | { ok: false; reason: FileRefusal }> {
  const base = resolve(root);
  const abs = isAbsolute(path) ? resolve(path) : resolve(base, path);
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

/** Workspace files on the local disk. */
export const diskFiles: WorkspaceFiles = {
  async describe(root, path) {
    const found = await locate(root, path);
    if (!found.ok) return found;
    const info = await stat(found.abs).catch(() => null);
    if (!info) return { ok: false, reason: "missing" };
    if (!info.isFile()) return { ok: false, reason: "not_a_file" };
    const bytes = await readFile(found.abs);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    return { ok: true, facts: { path, size: bytes.length, sha256 } };
  },
  async readText(root, path, maxBytes) {
    const found = await locate(root, path);
    if (!found.ok) return null;
    try {
      const bytes = await readFile(found.abs);
      return new TextDecoder().decode(bytes.subarray(0, maxBytes));
    } catch {
      return null;
    }
  },
  async writeText(root, path, text) {
    const abs = resolve(root, path);
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, text, "utf8");
    return abs;
  },
};
