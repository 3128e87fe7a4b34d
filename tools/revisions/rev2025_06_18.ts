/**
 * Protocol revision 2025-06-18 and the handshake revisions before it: 2025-11-25 without tasks
 * (no `tasks` capability, no `execution`, no task-augmented calls, no status notifications). A
 * run's task still travels in each answer's `_meta`, and the `tasks/*` methods answer in the
 * 2025-11-25 shapes.
 * @module
 */
import type { Revision } from "./revision.ts";
import { REV_2025_11_25 } from "./rev2025_11_25.ts";

/** Protocol revision 2025-06-18 (and any earlier handshake revision). */
export const REV_2025_06_18: Revision = {
  ...REV_2025_11_25,
  version: "2025-06-18",
  capabilities: (base) => base,
  listedTool: (tool) => tool,
  wantsTask: () => false,
  taskStatusChanged: () => Promise.resolve(),
  beforeTaskChange: () => Promise.resolve(),
};
