/**
 * What builds each profile's tools once the engine has loaded, by the registry's names
 * (`registry.ts`): a profile added there is a type error here until it has its tools.
 * @module
 */
import type { JobSource } from "../../engine/deepwork/job_catalog.ts";
import type { JobPorts } from "../../engine/deepwork/ports.ts";
import type { NamedSchemaSource } from "../../engine/review/ports.ts";
import type { ToolProfile } from "../calls/define_tool.ts";
import { DEFAULT_PROFILE } from "./default.ts";
import { deepworkProfile } from "./deepwork.ts";
import type { ProfileName } from "./registry.ts";

/** What a profile's tools may be built from. */
export interface ProfileInputs {
  /** DeepWork jobs. */
  jobs: JobSource;
  /** The DeepWork quality gate (built only by the profile that uses it). */
  gate: () => JobPorts["gate"];
  /** Named schemas (DeepWork's review rules for kinds of file). */
  schemas?: NamedSchemaSource;
  /** Where each call's log line goes (stderr; never stdout). */
  log?: (line: string) => void;
}

/** Each profile's tools, by name. */
export const PROFILE_TOOLS: Readonly<Record<ProfileName, (at: ProfileInputs) => ToolProfile>> = {
  default: () => DEFAULT_PROFILE,
  deepwork: (at) =>
    deepworkProfile({ jobs: at.jobs, gate: at.gate(), schemas: at.schemas, log: at.log }),
};
