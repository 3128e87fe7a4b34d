import { openCore } from "./open.ts";
for (let i = 0; i < 20; i++) {
  const home = await Deno.makeTempDir();
  const w = await openCore({ home });
  await w.list();
  await w.close();
  await Deno.remove(home, { recursive: true });
}
