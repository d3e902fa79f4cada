import type { StdioPluginRecord } from '@host/host-core';
import { readJsonFile, writeJsonAtomic } from '@host/host-fs';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';

/**
 * The intent of the one folder swap in progress, written (atomically) before
 * the first rename and removed after the registry write. On start, a journal
 * left by a crash is completed or rolled back; see `recover` in installer.ts.
 * Paths are relative to the data directory, so a moved data directory still
 * recovers.
 */
export type Journal =
  | {
      op: 'replace';
      pluginId: string;
      /** Staging folder holding the new version until it is renamed into place. */
      staging: string;
      /** Where the previous folder goes (or went); null for a fresh install. */
      backup: string | null;
      record: StdioPluginRecord;
      startedAt: string;
      /**
       * False when the swap only brings this host's folder in line with a
       * record another host stored (`syncPackage`): recovery then writes no record.
       */
      writesRecord?: boolean;
    }
  | { op: 'uninstall'; pluginId: string; backup: string | null; startedAt: string };

export const JOURNAL_FILE = 'install-journal.json';

export function journalPath(stateDir: string): string {
  return join(stateDir, JOURNAL_FILE);
}

export function writeJournal(stateDir: string, j: Journal): Promise<void> {
  return writeJsonAtomic(journalPath(stateDir), j, { mode: 0o600 });
}

export async function readJournal(stateDir: string): Promise<Journal | undefined> {
  return (await readJsonFile(journalPath(stateDir))) as Journal | undefined;
}

export async function clearJournal(stateDir: string): Promise<void> {
  await fs.rm(journalPath(stateDir), { force: true });
}
