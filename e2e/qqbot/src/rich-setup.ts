// What the rich message suites share: a local server for the image a plugin sends by URL, the built host with
// a Markdown QQ Bot account pointed at the fake platform, the platform's click event, and the event log's
// record of a click.
import { api, buildHost, startHost, type RunningHost } from '@host/e2e-support';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A 1x1 PNG.
export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000000000500010d0a2db40000000049454e44ae426082',
  'hex',
);

export interface ImageServer {
  /** The URL the PNG is served at. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves PNG at /thanks.png on loopback (the host listens on loopback, so its address policy lets it through),
 * with any query: the host keeps the file_info of a URL for every group of the account, so a test that wants
 * the platform to fetch the image again sends another URL.
 */
export async function serveImage(): Promise<ImageServer> {
  const server = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname === '/thanks.png')
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/thanks.png`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export interface RichQq {
  host: RunningHost;
  platform: FakeQqPlatform;
  signer: WebhookSigner;
  close(): Promise<void>;
}

/**
 * Builds the host and starts it with one QQ Bot account (`bot`, Markdown on) pointed at a new fake platform,
 * its data in a new folder named with `prefix`. `close` stops them and removes the folder.
 */
export async function startRichQq(bot: { appId: string; secret: string }, prefix: string): Promise<RichQq> {
  buildHost();
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const accountsFile = `${dataDir}.qqbot.json`;
  const platform = await FakeQqPlatform.start(bot);
  let host: RunningHost | undefined;
  let signer: WebhookSigner | undefined;
  const close = async () => {
    await signer?.close();
    await host?.stop();
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(accountsFile, { force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  };
  try {
    writeFileSync(
      accountsFile,
      JSON.stringify({
        accounts: [{ id: 'main', markdown: true, apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...bot }],
      }),
      { mode: 0o600 },
    );
    host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile }, [], { startTimeoutMilliseconds: 60_000 });
    const accounts = await api(host, 'GET', '/api/qqbot/accounts');
    signer = new WebhookSigner({ ...bot, webhookUrl: accounts.body.accounts[0].webhookUrl });
    return { host, platform, signer, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The INTERACTION_CREATE webhook of a click on a callback button in a group. */
export function groupClick(click: { id: string; group: string; member: string; buttonId: string; data: string }): Record<string, unknown> {
  return {
    op: 0,
    id: `INTERACTION_CREATE:${click.id}`,
    t: 'INTERACTION_CREATE',
    d: {
      id: click.id,
      type: 11,
      chat_type: 1,
      scene: 'group',
      timestamp: new Date().toISOString(),
      group_openid: click.group,
      group_member_openid: click.member,
      data: { type: 11, resolved: { button_data: click.data, button_id: click.buttonId } },
      version: 1,
    },
  };
}

/**
 * Waits (10 s) until the event log holds a completed interaction.created that `pluginId` took, other than the
 * records in `seen` (the ids of earlier clicks), and expects the plugin's delivery completed and its reply sent.
 * Answers the record's event id.
 */
export async function expectClickCompleted(host: RunningHost, pluginId: string, seen: string[] = []): Promise<string> {
  for (let i = 0; ; i++) {
    const events = await api(host, 'GET', '/api/events?limit=20');
    const record = events.body.events.find(
      (r: any) =>
        r.event.eventType === 'interaction.created' &&
        !seen.includes(r.eventId) &&
        r.deliveries.some((d: { pluginId: string }) => d.pluginId === pluginId),
    );
    if (record?.completedAt) {
      expect(record.deliveries).toEqual([expect.objectContaining({ pluginId, state: 'completed' })]);
      expect(record.outbound).toEqual([expect.objectContaining({ error: null })]);
      return record.eventId as string;
    }
    if (i > 100) throw new Error('the click never completed in the event log');
    await new Promise((r) => setTimeout(r, 100));
  }
}
