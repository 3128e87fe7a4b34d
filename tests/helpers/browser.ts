/**
 * Headless Chromium for the viewer tests: playwright-core driving Debian's chromium, never a
 * downloaded browser. Without it a browser test is ignored outside CI (one line says how to
 * install it); in CI (`CI=true`) a missing browser fails.
 * @module
 */
import { type BrowserContext, chromium } from "npm:playwright-core@1.65.1";

const CHROMIUM = "/usr/bin/chromium";
const INSTALL_HINT = "apt-get install chromium";
/** Whether this runs in CI, where a missing browser is a failure. */
export const IN_CI: boolean = /^(true|1)$/i.test(Deno.env.get("CI") ?? "");
/** Whether Debian's chromium is installed. */
export const HAS_CHROMIUM: boolean = (() => {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
})();
if (!HAS_CHROMIUM && !IN_CI) {
  console.error(`skipping the browser tests: no ${CHROMIUM}; install it with \`${INSTALL_HINT}\``);
}

/** Launches headless chromium with a throwaway profile. */
export async function launch(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
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
