import { HostError } from '@host/host-core';
import { isAtomicTempName, readJsonFile, writeFileAtomic, writeJsonAtomic } from '@host/host-store';
import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PackageSummarySchema, UpdateChangesSchema } from './update-diff';

/** An uploaded update waiting for the operator's confirmation. */
export const PendingUpdateSchema = z.object({
  id: z.string().describe('Pending update id, used to confirm or cancel.'),
  pluginId: z.string(),
  sha256: z.string().describe('SHA-256 of the uploaded archive; confirmation re-checks it.'),
  createdAt: z.string(),
  expiresAt: z.string(),
  installed: PackageSummarySchema,
  incoming: PackageSummarySchema,
  changes: UpdateChangesSchema,
});
export type PendingUpdate = z.infer<typeof PendingUpdateSchema>;

const ID = /^[0-9a-f-]{36}$/;

/**
 * Pending updates live in `<state>/pending/<id>.zip` with `<id>.json` beside
 * it. The JSON is written last, so a crash leaves at most an orphan ZIP that
 * the next sweep removes.
 */
export class PendingUpdates {
  constructor(
    readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  async create(archive: Buffer, details: Omit<PendingUpdate, 'id' | 'createdAt' | 'expiresAt'>, ttlMs: number): Promise<PendingUpdate> {
    await fs.mkdir(this.dir, { recursive: true });
    const id = randomUUID();
    const now = this.now();
    const pending: PendingUpdate = {
      id,
      ...details,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + ttlMs).toISOString(),
    };
    await writeFileAtomic(join(this.dir, `${id}.zip`), archive, { mode: 0o600 });
    await writeJsonAtomic(join(this.dir, `${id}.json`), pending, { mode: 0o600 });
    return pending;
  }

  /** The pending update, or PENDING_UPDATE_NOT_FOUND when unknown or expired. */
  async get(id: string): Promise<PendingUpdate> {
    const notFound = () => new HostError('PENDING_UPDATE_NOT_FOUND', undefined, { id });
    if (!ID.test(id)) throw notFound();
    const parsed = PendingUpdateSchema.safeParse(await readJsonFile(join(this.dir, `${id}.json`)).catch(() => undefined));
    if (!parsed.success) throw notFound();
    if (Date.parse(parsed.data.expiresAt) <= this.now()) {
      await this.delete(id);
      throw notFound();
    }
    return parsed.data;
  }

  /** Reads the archive and checks it is still the one the update was prepared from. */
  async archive(pending: PendingUpdate): Promise<Buffer> {
    const buf = await fs.readFile(join(this.dir, `${pending.id}.zip`)).catch(() => undefined);
    if (!buf || createHash('sha256').update(buf).digest('hex') !== pending.sha256) {
      await this.delete(pending.id);
      throw new HostError('PENDING_UPDATE_STALE', 'The stored archive of this pending update is missing or changed. Upload the package again.', {
        id: pending.id,
      });
    }
    return buf;
  }

  async delete(id: string): Promise<void> {
    await fs.rm(join(this.dir, `${id}.json`), { force: true });
    await fs.rm(join(this.dir, `${id}.zip`), { force: true });
  }

  async list(): Promise<PendingUpdate[]> {
    const out: PendingUpdate[] = [];
    for (const name of await fs.readdir(this.dir).catch(() => [] as string[])) {
      if (!name.endsWith('.json')) continue;
      try {
        out.push(await this.get(name.slice(0, -5)));
      } catch {
        // expired or unreadable: get() removed it or it is swept below
      }
    }
    return out;
  }

  /** Removes expired updates, orphan archives and temporary files. */
  async sweep(): Promise<void> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const live = new Set((await this.list()).map((p) => p.id));
    for (const name of names) {
      const id = name.replace(/\.(zip|json)$/, '');
      if (isAtomicTempName(name) || !live.has(id)) await fs.rm(join(this.dir, name), { force: true });
    }
  }
}
