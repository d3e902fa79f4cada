import { fork } from 'node:child_process';
import { rmSync } from 'node:fs';
import { ProcessGroups } from '@host/host-runtime';
import { checkInstalled, type InstalledPluginJob } from './installed';
import type { ConformanceReport } from './report';

/** How long an aborted worker gets to end its plugin's process group itself before it and the group are killed. */
const WORKER_EXIT_GRACE_MILLISECONDS = 2_000;

type WorkerAnswer = { ok: true; report: ConformanceReport } | { ok: false; message: string };

/**
 * Runs checkInstalled in a separate Node process (the built worker script,
 * see worker-main.ts), so nothing a plugin under test does can reach the
 * host's own process: the runner's buffers, timers and child processes live
 * and die with the worker. When `signal` aborts, the promise rejects with its
 * reason at once and the worker is told to go (its IPC channel is closed): it
 * exits and its exit hook kills the plugin's process group; a worker that has
 * not exited within two seconds is killed, and the group recorded in
 * `job.processRecordFile` with it. A host that dies closes the channel too.
 */
export function checkInstalledInSeparateProcess(
  workerScript: string,
  job: InstalledPluginJob,
  signal?: AbortSignal,
): Promise<ConformanceReport> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const child = fork(workerScript, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    let settled = false;
    let exited = false;
    const onAbort = () => {
      if (!settled) reject(signal!.reason);
      settled = true;
      if (exited) return;
      if (child.connected) child.disconnect();
      const kill = setTimeout(() => {
        if (exited) return;
        child.kill('SIGKILL');
      }, WORKER_EXIT_GRACE_MILLISECONDS);
      kill.unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('message', (answer: WorkerAnswer) => {
      if (settled) return;
      settled = true;
      if (answer.ok) resolve(answer.report);
      else reject(new Error(`the conformance worker failed: ${answer.message}`));
    });
    child.on('error', (e) => {
      if (!settled) reject(new Error(`the conformance worker could not start: ${e.message}`));
      settled = true;
    });
    child.on('exit', (code, exitSignal) => {
      exited = true;
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted && job.processRecordFile) {
        // Whatever the worker could not end itself.
        new ProcessGroups(job.processRecordFile).reapLeftovers();
        rmSync(job.processRecordFile, { force: true });
      }
      if (!settled)
        reject(new Error(`the conformance worker exited (${exitSignal ?? `code ${code}`}) without a report: ${stderr.slice(-600)}`));
      settled = true;
    });
    child.send(job);
  });
}

/** The worker process's side: takes one job over IPC, answers with the report, exits. */
export function serveOneJob(): void {
  // The host gave up on the run, or died: exiting runs the exit hook that kills the plugin's process group.
  process.once('disconnect', () => process.exit(1));
  process.once('message', (job: InstalledPluginJob) => {
    checkInstalled(job).then(
      (report) => process.send!({ ok: true, report } satisfies WorkerAnswer, () => process.exit(0)),
      (e: unknown) =>
        process.send!({ ok: false, message: e instanceof Error ? e.message : String(e) } satisfies WorkerAnswer, () => process.exit(1)),
    );
  });
}
