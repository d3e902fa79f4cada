// Real HTTP servers for this library's tests: node:http on 127.0.0.1, port 0,
// closed with every connection by `close()`. Not exported from the library.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { HttpManifestInput, MessageEventInput } from '@host/protocol';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The local address the client connected to. */
  localAddress: string | undefined;
}

export interface TestServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  server: Server;
  close(): Promise<void>;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export async function startServer(handler: Handler, host = '127.0.0.1', port = 0): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        localAddress: req.socket.localAddress,
      };
      requests.push(recorded);
      void handler(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const bound = (server.address() as { port: number }).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    port: bound,
    requests,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A port nothing listens on: bound once to get a free number, then released. */
export async function closedPort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export function manifest(overrides: Partial<HttpManifestInput> & Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pluginId: 'com.example.echo',
    name: 'Echo',
    version: '1.0.0',
    author: 'Example',
    protocolVersion: 2,
    capabilities: 9,
    ...overrides,
  };
}

export const OK_RESPONSE = { accepted: true, intercepted: false, outboundMessages: [], error: null };

export function messageEvent(overrides: Partial<MessageEventInput> = {}): MessageEventInput {
  return {
    eventId: 'evt-1',
    eventType: 'message.created',
    timestamp: '2026-01-01T00:00:00Z',
    source: 'console',
    bot: { botAccountId: 'bot-1', platform: 'console' },
    conversation: { type: 'group', conversationId: 'group-1' },
    sender: { provider: 'console', mentionId: 'user-1', displayName: 'Ada' },
    message: { id: 'msg-1', content: 'hello', attachments: [], mentions: [] },
    messageReference: { messageId: 'msg-1', targetType: 'group', targetId: 'group-1', restrictions: [] },
    ...overrides,
  };
}
