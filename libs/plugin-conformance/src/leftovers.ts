import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessGroups } from '@host/host-runtime';

/**
 * Ends the plugin process groups doctor runs wrote down in `dir` (one file per
 * run, see InstalledPluginJob.processRecordFile) whose host died before the
 * run ended, and removes the records. Returns the group leaders' pids. Call at
 * the host's start, before any doctor run.
 */
export function reapDoctorLeftovers(dir: string): number[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const reaped: number[] = [];
  for (const f of files) {
    const file = join(dir, f);
    reaped.push(...new ProcessGroups(file).reapLeftovers());
    rmSync(file, { force: true });
  }
  return reaped;
}
