import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every path under `root` with what it is: "dir", "link:<target>" or the
 * SHA-256 and mode of a file. Two equal snapshots mean nothing was written,
 * renamed or removed (timestamps aside).
 */
export function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[r] = 'dir';
        walk(p, r);
      } else out[r] = `${createHash('sha256').update(readFileSync(p)).digest('hex')} ${(st.mode & 0o777).toString(8)}`;
    }
  };
  walk(root, '');
  return out;
}
