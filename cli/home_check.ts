/**
 * What every command that uses a home says first when the home is there but is no folder (a
 * file, a link to nothing), in the words `serve` uses. Light on purpose: `setup` checks it
 * without loading the commands.
 * @module
 */
import { homePaths } from "../store/home_paths.ts";
import { homeProblem } from "../store/private_files.ts";

/** Why the home of `options` cannot be used; `null` for a folder, or nothing there yet. */
export async function homeRefusal(
  options: { home?: string; dbUrl?: string },
): Promise<string | null> {
  const problem = await homeProblem(homePaths(options).home);
  return problem ? `waymark cannot use its home: ${problem}.` : null;
}
