import { ADMIN_ROUTES, type QqBotAccountView, type RouteContract } from '@host/admin-api';
import { HostError } from '@host/host-core';
import { implementRoute, type RouteDef, type RouteHandler } from '@host/host-routes';
import type { Request } from 'express';
import type { QqBotAccount, QqBotAccounts } from './accounts';
import { ACK_BODY, ACK_TEXT, type QqBotWebhook } from './webhook';

export interface QqBotRoutesOptions {
  accounts: QqBotAccounts;
  webhook: QqBotWebhook;
  /** The address the platform reaches this host at (HOST_PUBLIC_URL), e.g. https://bot.example.com; default: the address of each admin request. */
  publicUrl?: string;
  /** Largest webhook body (default 64 KiB). */
  maxWebhookBytes?: number;
}

export const DEFAULT_MAX_WEBHOOK_BYTES = 64 * 1024;

/** Path of an account's webhook on this host. */
export function webhookPath(accountId: string): string {
  return `/api${ADMIN_ROUTES.qqBotWebhook.path.replace('{accountId}', encodeURIComponent(accountId))}`;
}

/** What the admin API shows of an account: never its secret. */
export function accountView(account: QqBotAccount, baseUrl: string): QqBotAccountView {
  const path = webhookPath(account.id);
  return {
    id: account.id,
    appId: account.config.appId,
    displayName: account.config.displayName ?? null,
    markdown: account.config.markdown === true,
    source: account.source,
    apiBaseUrl: account.apiBaseUrl,
    tokenUrl: account.tokenUrl,
    webhookPath: path,
    webhookUrl: baseUrl.replace(/\/+$/, '') + path,
    lastEvent: account.lastEvent,
    counters: { ...account.counters },
  };
}

/** The raw request body, refused with QQBOT_PAYLOAD_TOO_LARGE beyond `max` bytes (before reading it when Content-Length says so). */
export function readRawBody(req: Request, max: number): Promise<Buffer> {
  const tooLarge = () => new HostError('QQBOT_PAYLOAD_TOO_LARGE', `The webhook body is larger than ${max} bytes.`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  if (req.readableEnded) {
    // A body parser before this route took the bytes the signature covers.
    return Promise.reject(new Error('the webhook body was consumed before the webhook route; mount no body parser in front of it'));
  }
  // Plain events rather than an async iterator: this runs for every webhook request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/**
 * The QQ Bot routes under /api, each implementing its contract from
 * @host/admin-api: the account list and management behind the admin token,
 * and the webhook without it (authenticated by the platform's signature).
 */
export function qqbotRoutes(o: QqBotRoutesOptions): RouteDef[] {
  const routes: RouteDef[] = [];
  const route = <B, Q>(contract: RouteContract<B, Q>, handler: RouteHandler<B, Q>) => routes.push(implementRoute(contract, handler));
  const maxBytes = o.maxWebhookBytes ?? DEFAULT_MAX_WEBHOOK_BYTES;
  const baseOf = (req: Request) => o.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  const find = (id: string) => {
    const account = o.accounts.get(id);
    if (!account)
      throw new HostError('QQBOT_ACCOUNT_NOT_FOUND', `No QQ Bot account "${id}". List the accounts with GET /api/qqbot/accounts.`);
    return account;
  };

  route(ADMIN_ROUTES.listQqBotAccounts, async ({ req }) => ({
    body: { accounts: o.accounts.list().map((a) => accountView(a, baseOf(req))) },
  }));
  route(ADMIN_ROUTES.getQqBotAccount, async ({ req, params }) => ({
    body: { account: accountView(find(params['accountId']!), baseOf(req)) },
  }));
  route(ADMIN_ROUTES.addQqBotAccount, async ({ req, body }) => {
    const account = await o.accounts.add(body);
    return { status: 201, body: { account: accountView(account, baseOf(req)) } };
  });
  route(ADMIN_ROUTES.removeQqBotAccount, async ({ params }) => {
    const id = params['accountId']!;
    await o.accounts.remove(id);
    return { body: { removed: true, id } };
  });
  route(ADMIN_ROUTES.qqBotWebhook, async ({ req, res, params }) => {
    const body = await readRawBody(req, maxBytes);
    const answer = await o.webhook.handle(params['accountId']!, req.headers, body, req.socket.remoteAddress ?? 'unknown');
    // Written directly: the platform waits for this answer on every event, and the framework's JSON answer
    // (serialisation settings, an ETag hash) costs more than the answer itself. Refusals go through the error handler.
    const text = answer.body === ACK_BODY ? ACK_TEXT : Buffer.from(JSON.stringify(answer.body));
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': text.length }).end(text);
  });
  return routes;
}
