/**
 * The bundled library as tests expect to see it listed.
 * @module
 */
import { compareText } from "../../engine/common/collate.ts";
import { declaredId } from "../../engine/workflow/catalog.ts";
import { isRoutineId } from "../../engine/workflow/compile.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

const ids = BUNDLED_WORKFLOWS.map((f) => declaredId(f.text)!);
const byId = (a: string, b: string) => compareText(a, b);

/** Every bundled id in `list_workflows` order: the workflows by id, then the routines by id. */
export const BUNDLED_IDS: readonly string[] = [
  ...ids.filter((id) => !isRoutineId(id)).sort(byId),
  ...ids.filter(isRoutineId).sort(byId),
];
