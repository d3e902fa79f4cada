import { createServer, type IncomingMessage, type RequestListener, type ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Connection limits of the host's HTTP server. A client that opens
 * connections and sends nothing (or sends headers slowly) is cut off after
 * `headersTimeoutMilliseconds`, and no single address may hold more than
 * `maxConnectionsPerAddress` connections, so health checks and the admin
 * console still get through while one client misbehaves. When an address is
 * at its cap, its connection that has waited longest without a request in
 * progress is closed for the new one: idle keep-alive connections never keep
 * their own address out.
 *
 * A request with `Expect: 100-continue` gets `100 Continue` only when the
 * app starts reading its body (see answerContinueOnRead): one the app refuses
 * first (no or a wrong admin token, a declared size above the upload limit,
 * every upload slot busy) gets its final status alone, and the client never
 * sends the body.
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
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    answerContinueOnRead(req, res);
    server.emit('request', req, res);
  });
  const perAddress = new Map<string, Map<Socket, ConnectionUse>>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const use = perAddress.get(req.socket.remoteAddress ?? '')?.get(req.socket);
    if (!use) return;
    use.busy++;
    res.once('close', () => {
      use.busy--;
      use.idleSince = performance.now();
    });
  });
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    let open = perAddress.get(address);
    if (!open) perAddress.set(address, (open = new Map()));
    if (open.size >= l.maxConnectionsPerAddress) {
      const idle = longestIdle(open);
      if (!idle) {
        socket.destroy();
        return;
      }
      open.delete(idle);
      idle.destroy();
    }
    open.set(socket, { busy: 0, idleSince: performance.now() });
    // Node's header timeout only starts with the first byte: a connection that sends nothing is cut here.
    const silent = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, l.headersTimeoutMilliseconds);
    silent.unref();
    socket.once('close', () => {
      clearTimeout(silent);
      const mine = perAddress.get(address);
      if (!mine) return;
      mine.delete(socket);
      if (mine.size === 0) perAddress.delete(address);
    });
  });
  return server;
}

/**
 * Defers `100 Continue` to the first read of the body. Node answers it before
 * the app sees the request, so a request the app then refused got `100
 * Continue` and a final status: the client had begun sending a body the host
 * would not read, and some saw the connection reset. Now the decision comes
 * first: a final answer written before the body was read says
 * `Connection: close` (RFC 9110, 10.1.1: the server must say whether it reads
 * and discards the body or closes), since a client still waiting for `100
 * Continue` has not sent it.
 */
function answerContinueOnRead(req: IncomingMessage, res: ServerResponse): void {
  let continued = false;
  // `_read` is how a Readable asks its source for data: every way of reading the body (data events, pipe, read()) calls it.
  const read = req._read;
  req._read = function (this: IncomingMessage, size: number) {
    req._read = read;
    if (!res.headersSent) {
      continued = true;
      res.writeContinue();
    }
    return read.call(this, size);
  };
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!continued) this.setHeader('Connection', 'close');
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
}

interface ConnectionUse {
  /** Requests in progress (more than one only when a client pipelines). */
  busy: number;
  /** When the last request ended, or when the connection opened. */
  idleSince: number;
}

/** The connection without a request in progress that has waited longest, if any. */
function longestIdle(open: Map<Socket, ConnectionUse>): Socket | undefined {
  let found: Socket | undefined;
  let since = Infinity;
  for (const [socket, use] of open) {
    if (use.busy === 0 && use.idleSince < since) {
      found = socket;
      since = use.idleSince;
    }
  }
  return found;
}
