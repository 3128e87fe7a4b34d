/**
 * The client's workspace as waymark observes it: the folder (from MCP roots, else the server's
 * working directory) and that folder's git branch and HEAD commit. Adapters observe; the engine
 * records observations as events and ranks `resume_session` candidates with them.
 * @module
 */

/** One observation of the workspace. Every field is `null` when unknown. */
export interface WorkspaceObservation {
  /** The workspace folder (an absolute path), or `null` when the client's root is not a file. */
  workspace: string | null;
  /** The checked-out branch, or `null` (not a git repository, or a detached HEAD). */
  gitBranch: string | null;
  /** The HEAD commit (40 hex characters), or `null`. */
  gitHeadSha: string | null;
}

/** Whether two observations differ in any field. */
export function observationChanged(
  a: WorkspaceObservation | null | undefined,
  b: WorkspaceObservation,
): boolean {
  return !a || a.workspace !== b.workspace || a.gitBranch !== b.gitBranch ||
    a.gitHeadSha !== b.gitHeadSha;
}

/** How well a stored observation matches the caller's workspace. */
export interface WorkspaceMatch {
  /** Same folder. */
  sameWorkspace: boolean;
  /** Same git branch (both known). */
  sameBranch: boolean;
  /** Same HEAD commit (both known). */
  sameHead: boolean;
}

/** Compares a stored observation with the caller's. */
export function matchWorkspace(
  stored: WorkspaceObservation,
  current: WorkspaceObservation | null,
): WorkspaceMatch {
  if (!current) return { sameWorkspace: false, sameBranch: false, sameHead: false };
  const same = (x: string | null, y: string | null) => x !== null && y !== null && x === y;
  return {
    sameWorkspace: same(stored.workspace, current.workspace),
    sameBranch: same(stored.gitBranch, current.gitBranch),
    sameHead: same(stored.gitHeadSha, current.gitHeadSha),
  };
}

/**
 * A match as a number for ranking: the folder weighs most, then the branch, then the commit.
 * A session on the same branch of another clone still ranks above an unrelated one.
 */
export function matchScore(match: WorkspaceMatch): number {
  return (match.sameWorkspace ? 4 : 0) + (match.sameBranch ? 2 : 0) + (match.sameHead ? 1 : 0);
}
