/**
 * `deno task compile`: builds the single `waymark` binary. The bundled workflows are text
 * imports, so they are inside the binary; nothing is read from beside it. `deno compile`
 * downloads its runtime stub on first use: where that is impossible this task says so plainly.
 * @module
 */
const output = Deno.args[0] ?? "dist/waymark";
const command = new Deno.Command(Deno.execPath(), {
  args: ["compile", "-A", "--output", output, new URL("../main.ts", import.meta.url).pathname],
  stdout: "inherit",
  stderr: "piped",
});
const { code, stderr } = await command.output();
const text = new TextDecoder().decode(stderr);
if (code === 0) {
  console.error(`built ${output}`);
  Deno.exit(0);
}
const offline = /dns error|failed to lookup|error sending request|connect|network/i.test(text);
if (offline) {
  console.error(
    "deno compile could not download its runtime stub (denort) because this machine has no route to " +
      "the internet. Run `deno task compile` on a machine with internet access, or set DENORT_BIN to a " +
      "local denort binary of the same Deno version.",
  );
} else {
  console.error(
    `deno compile failed:\n${text.split("\n").filter((l) => !/^\s+\d+: /.test(l)).join("\n")}`,
  );
}
Deno.exit(1);
