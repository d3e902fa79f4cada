import { archivePieces, type ArchiveBytes, type PendingUpdateStore } from '@host/host-core';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { isAtomicTempName, readJsonFile, writeFileAtomic, writeJsonAtomic } from '@host/host-fs';

// Ids become file names: letters, digits and dashes only (the installer uses UUIDs).
const ID = /^[A-Za-z0-9-]{1,64}$/;

function checkId(id: string): string {
  if (!ID.test(id)) throw new Error(`"${id}" is not a valid pending update id (letters, digits and dashes, at most 64).`);
  return id;
}

/**
 * The embedded pending update store: `<dir>/<id>.zip` with `<id>.json` beside
 * it. The JSON is written last, so a crash leaves at most an archive without
 * its description, which the first use after a start removes, with temporary
 * files of interrupted writes.
 *
 * `earlier` is where a host of an older version kept them (the embedded database): updates found only there are
 * read, listed and deleted there, and none is saved there any more.
 */
export class FilePendingUpdateStore implements PendingUpdateStore {
  private ready: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    private readonly earlier?: PendingUpdateStore,
  ) {}

  async save(id: string, archive: ArchiveBytes, description: unknown): Promise<void> {
    await this.prepare();
    const zip = join(this.dir, `${checkId(id)}.zip`);
    await writeFileAtomic(zip, archive instanceof Uint8Array ? archive : archivePieces(archive), { mode: 0o600 });
    try {
      await writeJsonAtomic(join(this.dir, `${id}.json`), description, { mode: 0o600 });
    } catch (e) {
      await fs.rm(zip, { force: true });
      throw e;
    }
  }

  async read(id: string): Promise<unknown> {
    if (!ID.test(id)) return undefined;
    await this.prepare();
    return (await readJsonFile(join(this.dir, `${id}.json`)).catch(() => undefined)) ?? this.earlier?.read(id);
  }

  async readArchive(id: string): Promise<Uint8Array | undefined> {
    if (!ID.test(id)) return undefined;
    await this.prepare();
    return (await fs.readFile(join(this.dir, `${id}.zip`)).catch(() => undefined)) ?? this.earlier?.readArchive(id);
  }

  async archiveFile(id: string): Promise<string | undefined> {
    if (!ID.test(id)) return undefined;
    await this.prepare();
    const file = join(this.dir, `${id}.zip`);
    return fs.access(file).then(
      () => file,
      () => undefined,
    );
  }

  async delete(id: string): Promise<void> {
    if (!ID.test(id)) return;
    await this.prepare();
    await fs.rm(join(this.dir, `${id}.json`), { force: true });
    await fs.rm(join(this.dir, `${id}.zip`), { force: true });
    await this.earlier?.delete(id);
  }

  async list(): Promise<string[]> {
    await this.prepare();
    const names = await fs.readdir(this.dir);
    const own = names.filter((n) => n.endsWith('.json') && !isAtomicTempName(n) && ID.test(n.slice(0, -5))).map((n) => n.slice(0, -5));
    const before = (await this.earlier?.list()) ?? [];
    return [...before.filter((id) => !own.includes(id)), ...own];
  }

  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await fs.mkdir(this.dir, { recursive: true });
      const names = await fs.readdir(this.dir);
      const described = new Set(names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)));
      for (const name of names) {
        const orphanArchive = name.endsWith('.zip') && !described.has(name.slice(0, -4));
        if (isAtomicTempName(name) || orphanArchive) await fs.rm(join(this.dir, name), { force: true });
      }
    })().catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }
}
