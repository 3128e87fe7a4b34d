/**
 * The client's workspace, per request: MCP roots (read once after connect, cached, refetched
 * on `notifications/roots/list_changed`), the first `file://` root, else the server's working
 * directory; and that folder's git branch and HEAD commit, read from `.git` with plain file
 * reads (HEAD, the ref file, packed-refs; worktrees through `commondir`). Nothing here is ever
 * an error: a non-file root or a folder outside git gives `null` fields.
 * {@linkcode connectionWorkspace} wires this to one connection.
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Server, ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import type { WorkspaceObservation } from "../../engine/model/workspace.ts";

/** A client root as `roots/list` returns it. */
export interface Root {
  /** The root's URI. */
  uri: string;
  /** Optional display name. */
  name?: string;
}

/** The folder of the first `file://` root, or `null` when no root is a file URI. */
export function firstFileRoot(roots: readonly Root[]): string | null {
  for (const root of roots) {
    if (!root.uri.startsWith("file:")) continue;
    try {
      return resolve(fileURLToPath(root.uri));
    } catch {
      continue;
    }
  }
  return null;
}

// Synchronous reads on purpose: the files are tiny and local, and each async call is a hop
// through the runtime's thread pool (with an ENOENT error built for every missing `.git` on the
// way up), which cost 4-7 ms on a session's first call and 0.3 ms on every later one.
function readText(path: string): string | null {
  if (!existsSync(path)) return null;
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

const gitDirs = new Map<string, { gitDir: string; commonDir: string } | null>();

/** Finds the git directory of a folder (walking up), cached per folder: it never moves. */
function findGitDir(folder: string): { gitDir: string; commonDir: string } | null {
  const cached = gitDirs.get(folder);
  if (cached !== undefined) return cached;
  let found: { gitDir: string; commonDir: string } | null = null;
  let dir = folder;
  for (let i = 0; i < 64; i++) {
    const dotGit = join(dir, ".git");
    const info = existsSync(dotGit) ? statSync(dotGit, { throwIfNoEntry: false }) : undefined;
    if (info?.isDirectory()) {
      found = { gitDir: dotGit, commonDir: dotGit };
      break;
    }
    if (info?.isFile()) {
      // a worktree or submodule: `.git` is a file holding `gitdir: <path>`
      const pointer = readText(dotGit)?.match(/^gitdir:\s*(.+)\s*$/m)?.[1];
      if (pointer) {
        const gitDir = resolve(dir, pointer.trim());
        const common = readText(join(gitDir, "commondir"))?.trim();
        found = { gitDir, commonDir: common ? resolve(gitDir, common) : gitDir };
      }
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  gitDirs.set(folder, found);
  return found;
}

/** Whether a folder is inside a git repository: cached per folder, so a call outside git reads nothing. */
export function inGitRepository(folder: string): boolean {
  return findGitDir(folder) !== null;
}

/** The branch and HEAD commit of a folder: a few small file reads, never an error. */
export function gitState(
  folder: string,
): Promise<{ gitBranch: string | null; gitHeadSha: string | null }> {
  return Promise.resolve(readGitState(folder));
}

function readGitState(folder: string): { gitBranch: string | null; gitHeadSha: string | null } {
  const none = { gitBranch: null, gitHeadSha: null };
  const dirs = findGitDir(folder);
  if (!dirs) return none;
  const head = readText(join(dirs.gitDir, "HEAD"))?.trim();
  if (!head) return none;
  if (/^[0-9a-f]{40,64}$/.test(head)) return { gitBranch: null, gitHeadSha: head };
  const ref = head.match(/^ref:\s*(\S+)$/)?.[1];
  if (!ref) return none;
  const gitBranch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
  const loose = readText(join(dirs.gitDir, ref))?.trim() ??
    readText(join(dirs.commonDir, ref))?.trim();
  if (loose && /^[0-9a-f]{40,64}$/.test(loose)) return { gitBranch, gitHeadSha: loose };
  const packed = readText(join(dirs.commonDir, "packed-refs"));
  for (const line of packed?.split("\n") ?? []) {
    const [sha, name] = line.split(" ");
    if (name === ref && sha && /^[0-9a-f]{40,64}$/.test(sha)) return { gitBranch, gitHeadSha: sha };
  }
  // a branch with no commits yet
  return { gitBranch, gitHeadSha: null };
}

/** Observes a workspace folder (or `null` for a client whose roots are not files). */
export async function observeWorkspace(folder: string | null): Promise<WorkspaceObservation> {
  if (folder === null) return { workspace: null, gitBranch: null, gitHeadSha: null };
  return { workspace: folder, ...(await gitState(folder)) };
}

/** How to ask the client for its roots. */
export type FetchRoots = () => Promise<{ roots: Root[] }>;

/**
 * The roots a connection last reported. Fetched once after connect and again after each
 * `notifications/roots/list_changed`; between those, every request reads the cache, so roots
 * add no round trip to a call. When the cache is stale at a call (the fetch after connect was
 * lost, as on an HTTP session whose client has not opened its event stream yet), the call
 * fetches through its own request, whose response stream always reaches the client.
 */
export class RootsCache {
  #roots: readonly Root[] | null = null;
  #stale = true;
  #pending: Promise<void> | null = null;
  #generation = 0;
  #fromRoots = false;

  /** Creates a cache that falls back to `cwd` while the client has given no roots. */
  constructor(
    private readonly cwd: string,
    private readonly log?: (line: string) => void,
  ) {}

  /** Marks the roots stale and fetches them (after connect, and on `roots/list_changed`). */
  refresh(fetchRoots: FetchRoots): Promise<void> {
    const generation = ++this.#generation;
    this.#stale = true;
    // a request the negotiated era forbids (roots/list on a 2026-07-28 connection) throws at
    // once rather than rejecting: either way the call keeps the fallback folder
    const pending = new Promise<Awaited<ReturnType<FetchRoots>>>((resolve) => resolve(fetchRoots()))
      .then(
        (result) => {
          if (generation !== this.#generation) return;
          this.#roots = Object.freeze([...result.roots]);
          this.#stale = false;
          this.log?.(`roots: ${result.roots.map((r) => r.uri).join(", ") || "(none)"}`);
        },
        (error) => {
          if (generation !== this.#generation) return;
          this.log?.(`roots/list failed (${(error as Error)?.message}); using ${this.cwd}`);
        },
      ).finally(() => {
        if (this.#pending === pending) this.#pending = null;
      });
    this.#pending = pending;
    return pending;
  }

  /**
   * The workspace folder for a request: the first `file://` root, `null` when the client has
   * roots but none is a file, or the working directory when it has none. `fetchRelated`
   * (absent for clients without the roots capability) refetches stale roots through the
   * current request.
   */
  async folder(fetchRelated?: FetchRoots): Promise<string | null> {
    if (this.#stale && fetchRelated) {
      if (this.#pending) await withTimeout(this.#pending, 250);
      if (this.#stale) await withTimeout(this.refresh(fetchRelated), 5000);
      // a client that cannot answer keeps the fallback without asking on every call
      this.#stale = false;
    }
    const roots = this.#roots;
    this.#fromRoots = !!roots && roots.length > 0;
    if (!roots || roots.length === 0) return this.cwd;
    return firstFileRoot(roots);
  }

  /** Whether the last {@linkcode folder} came from the client's roots (not the fallback). */
  get fromRoots(): boolean {
    return this.#fromRoots;
  }
}

async function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise, new Promise<void>((r) => timer = setTimeout(r, ms))]);
  clearTimeout(timer);
}

/**
 * The workspace of each request on one connection: fetches the client's roots after connect
 * and on `notifications/roots/list_changed`, and observes the folder they name per request.
 */
export function connectionWorkspace(
  server: Server,
  options: { cwd: string; log?: (line: string) => void; commandsNeedRoots?: boolean },
): (ctx: ServerContext) => Promise<WorkspaceObservation & { commandFolder?: string | null }> {
  const roots = new RootsCache(options.cwd, options.log);
  const hasRoots = () => server.getClientCapabilities()?.roots !== undefined;
  const fetchRoots = () => roots.refresh(() => server.listRoots(undefined, { timeout: 5000 }));
  server.oninitialized = () => {
    if (hasRoots()) void fetchRoots();
  };
  server.setNotificationHandler("notifications/roots/list_changed", () => {
    if (hasRoots()) void fetchRoots();
  });
  return async (ctx) => {
    const related = hasRoots()
      ? () => ctx.mcpReq.send({ method: "roots/list" }, { timeout: 5000 })
      : undefined;
    const observed = await observeWorkspace(await roots.folder(related));
    // over HTTP the fallback folder is the server's own, no client's: no commands run there
    return options.commandsNeedRoots && !roots.fromRoots
      ? Object.assign(observed, { commandFolder: null })
      : observed;
  };
}
