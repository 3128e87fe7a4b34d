/**
 * Debian's chromium, driven by playwright-core (never a downloaded browser), for the browser
 * tests. Without it a browser test is ignored outside CI, with one line saying how to install
 * it; in CI (`CI=true`) a missing browser fails the test.
 * @module
 */
import { type BrowserContext, chromium } from "npm:playwright-core@1.65.1";

/** Where Debian installs chromium. */
export const CHROMIUM = "/usr/bin/chromium";
const INSTALL_HINT = "apt-get install chromium";
const IN_CI = /^(true|1)$/i.test(Deno.env.get("CI") ?? "");
const HAS_CHROMIUM = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();

/** Whether browser tests are skipped here (no chromium, not CI); says so on stderr once. */
export const IGNORE_BROWSER = !HAS_CHROMIUM && !IN_CI;
if (IGNORE_BROWSER) {
  console.error(`skipping the browser tests: no ${CHROMIUM}; install it with \`${INSTALL_HINT}\``);
}

/** A headless chromium with a throwaway profile; `close` removes the profile. */
export async function launchChromium(): Promise<
  { context: BrowserContext; close(): Promise<void> }
> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (${INSTALL_HINT}); .ci/run does`,
    );
  }
  const profile = await Deno.makeTempDir({ prefix: "waymark-chromium-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}
