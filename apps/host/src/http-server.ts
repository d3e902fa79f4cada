import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connection limits of the host's HTTP server. A client that opens
 * connections and sends nothing (or sends headers slowly) is cut off after
 * `headersTimeoutMilliseconds`, and no single address may hold more than
 * `maxConnectionsPerAddress` connections, so health checks and the admin
 * console still get through while one client misbehaves.
 */
export interface ServerLimits {
  /** Time to receive a request's headers. */
  headersTimeoutMilliseconds: number;
  /** Time to receive a whole request, body included (a package upload). */
  requestTimeoutMilliseconds: number;
  /**
   * How long an idle keep-alive connection stays open. Longer than the 60 s idle timeout of common reverse
   * proxies and load balancers, so the client side closes idle connections first: when the host closes one just
   * as a client reuses it, that client's request fails (EPIPE or a reset) without reaching the host.
   */
  keepAliveTimeoutMilliseconds: number;
  /** How often the server looks for connections past these timeouts. */
  checkIntervalMilliseconds: number;
  /** Open connections in all. */
  maxConnections: number;
  /** Open connections from one remote address. */
  maxConnectionsPerAddress: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  headersTimeoutMilliseconds: 10_000,
  requestTimeoutMilliseconds: 300_000,
  keepAliveTimeoutMilliseconds: 65_000,
  checkIntervalMilliseconds: 1_000,
  maxConnections: 4_096,
  maxConnectionsPerAddress: 256,
};

/** The host's HTTP server for `app`, with `limits` applied (see ServerLimits). */
export function createHostServer(app: RequestListener, limits: Partial<ServerLimits> = {}): Server {
  const l = { ...DEFAULT_SERVER_LIMITS, ...limits };
  const server = createServer(
    {
      headersTimeout: l.headersTimeoutMilliseconds,
      requestTimeout: l.requestTimeoutMilliseconds,
      keepAliveTimeout: l.keepAliveTimeoutMilliseconds,
      connectionsCheckingInterval: l.checkIntervalMilliseconds,
    },
    app,
  );
  server.maxConnections = l.maxConnections;
  const perAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const open = (perAddress.get(address) ?? 0) + 1;
    if (open > l.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    perAddress.set(address, open);
    // Node's header timeout only starts with the first byte: a connection that sends nothing is cut here.
    const silent = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, l.headersTimeoutMilliseconds);
    silent.unref();
    socket.once('close', () => {
      clearTimeout(silent);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
  });
  return server;
}
