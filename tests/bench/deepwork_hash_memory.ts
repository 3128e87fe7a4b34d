/**
 * Peak memory of hashing one DeepWork output file, from 1 MiB to 3 GiB: each size is hashed in
 * a fresh process (through the disk adapter the profile uses, with no budget, so every byte is
 * read) and its peak resident set (`VmHWM`) is reported before and after, with the time taken.
 * Streaming keeps the growth flat whatever the size. A script, not a timed test:
 *
 *   deno run -A tests/bench/deepwork_hash_memory.ts
 * @module
 */
import { fileURLToPath } from "node:url";
import { diskFiles } from "../../tools/profiles/deepwork/files.ts";

const MiB = 1024 * 1024;
const SIZES = [1 * MiB, 64 * MiB, 1024 * MiB, 3 * 1024 * MiB];

function peakRssMiB(): number {
  const line = Deno.readTextFileSync("/proc/self/status").split("\n")
    .find((l) => l.startsWith("VmHWM:"));
  return Number(line?.match(/\d+/)?.[0] ?? 0) / 1024;
}

/** In the child: hash one sparse file of `bytes` and print `{before, after, ms}` as JSON. */
async function child(bytes: number): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waymark-hash-" });
  try {
    const file = await Deno.open(`${dir}/f.bin`, { create: true, write: true });
    await file.truncate(bytes);
    file.close();
    const before = peakRssMiB();
    const t0 = performance.now();
    const described = await diskFiles.describe(dir, "f.bin", { hashUpTo: Infinity });
    const ms = performance.now() - t0;
    if (!described.ok || described.facts.sha256 === null) throw new Error("not hashed");
    console.log(JSON.stringify({ before, after: peakRssMiB(), ms }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function main(): Promise<void> {
  console.log("size        peak RSS before  after   growth   time");
  for (const bytes of SIZES) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", fileURLToPath(import.meta.url), String(bytes)],
      stderr: "inherit",
    }).output();
    const r = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      before: number;
      after: number;
      ms: number;
    };
    const size = bytes >= 1024 * MiB ? `${bytes / 1024 / MiB} GiB` : `${bytes / MiB} MiB`;
    console.log(
      `${size.padEnd(12)}${r.before.toFixed(0).padStart(7)} MiB  ${
        r.after.toFixed(0).padStart(5)
      } MiB  ${(r.after - r.before).toFixed(1).padStart(5)} MiB  ${(r.ms / 1000).toFixed(2)} s`,
    );
  }
}

if (import.meta.main) {
  const [arg] = Deno.args;
  await (arg === undefined ? main() : child(Number(arg)));
}
