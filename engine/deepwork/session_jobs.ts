/**
 * Session jobs (`register_session_job`, `get_session_job`): a job definition an agent writes
 * for its own session, checked like any job, kept at
 * `<project>/.deepwork/tmp/session_jobs/<session_id>/<job_name>/job.yml` and found by
 * `start_workflow` called with that `session_id` only (it comes before the project's jobs
 * there). Registering again replaces it.
 * @module
 */
import { fail, ok, type Result } from "../model/result.ts";
import { guard } from "../run/error_guard.ts";
import { loadJob } from "./job_catalog.ts";
import { instructionFiles } from "./job.ts";
import { parseJobYaml } from "./parse.ts";
import type { JobPorts } from "./ports.ts";

/** A session job's name. */
export const SESSION_JOB_NAME = /^[a-z][a-z0-9_]*$/;
/** A session id as a folder name: no separators, no leading dot. */
const SESSION_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** Where session jobs live, relative to the project root. */
export const SESSION_JOBS_FOLDER = ".deepwork/tmp/session_jobs";

/** The folder of a session's jobs (relative to the project root). */
export function sessionJobsFolder(sessionId: string): string {
  return `${SESSION_JOBS_FOLDER}/${sessionId}`;
}

/** The session whose job a job folder is, or `null` for any other job folder. */
export function sessionOfJobDir(jobDir: string | null): string | null {
  const at = jobDir?.lastIndexOf(`/${SESSION_JOBS_FOLDER}/`) ?? -1;
  if (at < 0) return null;
  return jobDir!.slice(at + SESSION_JOBS_FOLDER.length + 2).split("/")[0] ?? null;
}

/** Why `session_id` cannot name a session's folder, or `null`. */
export function sessionKeyProblem(sessionId: string): string | null {
  return SESSION_KEY.test(sessionId) && !sessionId.includes("..")
    ? null
    : `session_id ${
      JSON.stringify(sessionId.slice(0, 100))
    } must be letters, digits, \`_\`, \`.\` and \`-\` (no path)`;
}

function badName(input: { job_name: string; session_id: string }): Result<never> | null {
  if (!SESSION_JOB_NAME.test(input.job_name)) {
    return fail(
      "INVALID_ARGUMENTS",
      `job_name ${
        JSON.stringify(input.job_name)
      } must match ^[a-z][a-z0-9_]*$ (lower-case letters, digits, \`_\`).`,
      { details: { job_name: input.job_name } },
    );
  }
  const key = sessionKeyProblem(input.session_id);
  return key
    ? fail("INVALID_ARGUMENTS", `${key}.`, { details: { session_id: input.session_id } })
    : null;
}

/** What `register_session_job` answers. */
export interface SessionJobRegistered {
  status: "registered";
  job_name: string;
  job_dir: string;
  message: string;
}

/** `register_session_job`: checks the definition like any job, then writes it for the session. */
export function registerSessionJob(
  ports: Pick<JobPorts, "files">,
  input: { job_name: string; job_definition_yaml: string; session_id: string; root: string },
): Promise<Result<SessionJobRegistered>> {
  return guard(async () => {
    const refused = badName(input);
    if (refused) return refused;
    const parsed = await parseJobYaml(input.job_definition_yaml);
    const invalid = (why: string) =>
      fail("INVALID_ARGUMENTS", `The job definition is not a valid job: ${why}`, {
        details: { job_name: input.job_name },
      });
    if (!parsed.ok) return invalid(parsed.error.message);
    if (parsed.job.name !== input.job_name) {
      return invalid(`it names the job \`${parsed.job.name}\`, not \`${input.job_name}\`.`);
    }
    const folder = `${sessionJobsFolder(input.session_id)}/${input.job_name}`;
    const files = instructionFiles(parsed.job);
    if (files.length > 0) {
      return invalid(
        `a session job has no folder of instruction files; write its steps' instructions inline (it names ${
          files.join(", ")
        }).`,
      );
    }
    const loaded = await loadJob(parsed.job, {
      dir: `${input.root}/${folder}`,
      source: "project",
      instructions: new Map(),
    });
    if (!loaded.ok) return invalid(loaded.error.error);
    const written = await ports.files.writeText(
      input.root,
      `${folder}/job.yml`,
      input.job_definition_yaml,
    );
    if (written === null) {
      return fail(
        "OUTPUT_INVALID",
        `The session job could not be written to ${folder}/job.yml inside ${input.root} (a link on the way leaves the project, or it cannot be written).`,
        { details: { job_name: input.job_name } },
      );
    }
    return ok({
      status: "registered",
      job_name: input.job_name,
      job_dir: written.slice(0, written.lastIndexOf("/")),
      message:
        `Job \`${input.job_name}\` is registered for session ${input.session_id}: start it with start_workflow and session_id \`${input.session_id}\`.`,
    });
  });
}

/** `get_session_job`: the YAML a session registered under a name. */
export function getSessionJob(
  ports: Pick<JobPorts, "files">,
  input: { job_name: string; session_id: string; root: string },
): Promise<Result<{ job_name: string; session_id: string; job_definition_yaml: string }>> {
  return guard(async () => {
    const refused = badName(input);
    if (refused) return refused;
    const path = `${sessionJobsFolder(input.session_id)}/${input.job_name}/job.yml`;
    const text = await ports.files.readText(input.root, path, 1024 * 1024);
    if (text === null) {
      return fail(
        "WORKFLOW_NOT_FOUND",
        `No session job \`${input.job_name}\` is registered for session ${input.session_id}; register it with register_session_job.`,
        { details: { job_name: input.job_name, session_id: input.session_id } },
      );
    }
    return ok({
      job_name: input.job_name,
      session_id: input.session_id,
      job_definition_yaml: text,
    });
  });
}
