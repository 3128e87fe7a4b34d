/**
 * One socket write per batch of protocol messages. `pg` writes each message of a statement
 * (bind, describe, execute, sync) separately between `cork()` and `uncork()`, and Deno's
 * `node:net` sends each as its own `sendto`: four system calls per statement, each waking the
 * server for a fragment. Here a corked socket keeps what is written and sends it as one buffer
 * when the last `uncork()` comes (a local round trip drops from about 0.06 to 0.035 ms); the
 * driver also keeps a socket corked over statements sent ahead, so a transaction's `BEGIN` and
 * its projection writes reach the server together with the next statement that waits.
 * @module
 */
import { Buffer } from "node:buffer";

/** The parts of a `net.Socket` that `pg` writes through. */
interface Writable {
  write(chunk: unknown, ...rest: unknown[]): boolean;
  cork(): void;
  uncork(): void;
  /** False once the socket ended or was destroyed. */
  readonly writable: boolean;
}

/** The socket of a connected `pg` client (an internal of `pg`; absent, nothing changes). */
export function socketOf(client: unknown): Writable | undefined {
  const stream = (client as { connection?: { stream?: Partial<Writable> } }).connection?.stream;
  return typeof stream?.write === "function" && typeof stream.cork === "function"
    ? stream as Writable
    : undefined;
}

/** Makes `socket`'s `cork()`/`uncork()` gather writes into one (they nest). */
export function coalesceWrites(socket: Writable): void {
  const write = socket.write.bind(socket);
  let depth = 0;
  let held: Uint8Array[] = [];
  const flush = () => {
    if (held.length === 0) return;
    const chunks = held;
    held = [];
    // a connection the server closed meanwhile: `pg` fails the statements held here as lost
    // (writing would fail them with "write after end" instead)
    if (socket.writable) write(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  };
  socket.cork = () => {
    depth++;
  };
  socket.uncork = () => {
    if (depth > 0 && --depth === 0) flush();
  };
  socket.write = (chunk: unknown, ...rest: unknown[]) => {
    if (depth > 0 && chunk instanceof Uint8Array && rest.length === 0) {
      held.push(chunk);
      return true;
    }
    flush(); // whatever was held goes first
    return write(chunk, ...rest);
  };
}
