/**
 * A TCP proxy between the tests' clients and the PostgreSQL server that can cut connections at a
 * chosen point of the protocol: after the server sent a `CommandComplete` for `COMMIT` (the
 * transaction is durable on the server) and before the client reads it, the worst moment for a
 * client to lose its connection.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CuttingProxy {
  readonly port: number;
  /** The URL of the server, through the proxy. */
  url(serverUrl: string): string;
  /**
   * Cuts the next connection that receives `CommandComplete COMMIT`, before the client hears it;
   * with `thenRefuse`, new connections are refused from then on (the server looks down).
   */
  cutAfterNextCommit(options?: { thenRefuse?: boolean }): void;
  /** How many commits were cut so far. */
  readonly cuts: number;
  /** Refuses (closes) every new connection while set: the server looks down. */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

export async function startProxy(serverPort: number): Promise<CuttingProxy> {
  let armed = false;
  let refuseAfterCut = false;
  let refusing = false;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(serverPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    // Server to client, message by message (type byte, int32 length including itself, body).
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      let start = 0;
      while (pending.length - start >= 5) {
        const length = pending.readInt32BE(start + 1);
        if (pending.length - start < 1 + length) break;
        const type = String.fromCharCode(pending[start] as number);
        const body = pending.subarray(start + 5, start + 1 + length);
        if (armed && type === 'C' && body.toString('utf8').startsWith('COMMIT')) {
          armed = false;
          cuts++;
          if (refuseAfterCut) refusing = true;
          if (start > 0) client.write(pending.subarray(0, start));
          drop();
          return;
        }
        start += 1 + length;
      }
      if (start > 0) {
        client.write(pending.subarray(0, start));
        pending = pending.subarray(start);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    url: (serverUrl) => {
      const url = new URL(serverUrl);
      url.port = String(port);
      return url.toString();
    },
    cutAfterNextCommit: (options = {}) => {
      armed = true;
      refuseAfterCut = options.thenRefuse === true;
    },
    get cuts() {
      return cuts;
    },
    refuse: (on) => {
      refusing = on;
      if (on) for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
