import { promises as fs } from 'node:fs';
import { join, posix } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { crc32 } from './crc32';

/** The files of a folder, as paths relative to it with `/`, in a stable order; links and special files are left out. */
async function filesOf(root: string, dir = ''): Promise<{ name: string; path: string; mode: number }[]> {
  const entries = await fs.readdir(join(root, dir), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: { name: string; path: string; mode: number }[] = [];
  for (const e of entries) {
    const name = dir ? posix.join(dir, e.name) : e.name;
    const path = join(root, name);
    if (e.isDirectory()) out.push(...(await filesOf(root, name)));
    else if (e.isFile()) out.push({ name, path, mode: (await fs.stat(path)).mode & 0o777 });
  }
  return out;
}

/**
 * A ZIP archive of an unpacked package folder (a backup), as the installer
 * reads uploads: one deflated entry per file with its permission bits, names
 * in UTF-8. The archive goes through the installer's checks like any upload.
 */
export async function zipFolder(root: string): Promise<Buffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const f of await filesOf(root)) {
    const name = Buffer.from(f.name, 'utf8');
    const raw = await fs.readFile(f.path);
    const body = deflateRawSync(raw, { level: 6 });
    const crc = crc32(raw) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(0x00210000, 10); // 1980-01-01 00:00: the archive depends on the files only
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made on Unix: the external attributes hold the mode
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(0x00210000, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((0o100000 | f.mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const count = centrals.length / 2;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
