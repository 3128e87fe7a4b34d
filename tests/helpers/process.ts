/**
 * One run of a program with text on its stdin, as a host runs a hook or a launcher: its exit
 * code and what it wrote on stdout and stderr.
 * @module
 */
import { fileURLToPath } from "node:url";

/** Absolute path of main.ts, the `waymark` a test runs. */
export const MAIN: string = fileURLToPath(new URL("../../main.ts", import.meta.url));

/** What a run wrote, and how it ended. */
export interface Ran {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Runs `command args` with `stdin` (default none) and waits for it to exit. */
export async function runWithInput(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; stdin?: string } = {},
): Promise<Ran> {
  const child = new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: options.env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  // a child that exits without reading its stdin (a refusal, a launcher with nothing to run)
  // closes the pipe: that is not the test's failure
  await writer.write(new TextEncoder().encode(options.stdin ?? "")).then(() => writer.close())
    .catch(() => {});
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}
