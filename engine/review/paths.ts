/**
 * Project paths as review rules see them: `/`-separated, relative to the workspace root, with
 * no `.` or `..` segments. A path that would leave the root has no such form.
 * @module
 */

/** `path` (relative to the folder `from`, itself relative to the root) relative to the root, or `null` when it leaves the root or is absolute. */
export function projectPath(from: string, path: string): string | null {
  if (path.startsWith("/") || path.includes("\0") || /^[A-Za-z]:[\\/]/.test(path)) return null;
  const parts: string[] = from === "" ? [] : from.split("/");
  for (const segment of path.replaceAll("\\", "/").split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(segment);
  }
  return parts.length === 0 ? null : parts.join("/");
}

/** The folder of a project path (`""` for the root). */
export function folderOf(path: string): string {
  const at = path.lastIndexOf("/");
  return at < 0 ? "" : path.slice(0, at);
}

/** `path` relative to `folder` when it lies inside it, else `null`. */
export function relativeTo(folder: string, path: string): string | null {
  if (folder === "") return path;
  return path.startsWith(`${folder}/`) ? path.slice(folder.length + 1) : null;
}
