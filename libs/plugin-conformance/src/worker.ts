import { fork } from 'node:child_process';
import { checkInstalled, type InstalledPluginJob } from './installed';
import type { ConformanceReport } from './report';

type WorkerAnswer = { ok: true; report: ConformanceReport } | { ok: false; message: string };

/**
 * Runs checkInstalled in a separate Node process (the built worker script,
 * see worker-main.ts), so nothing a plugin under test does can reach the
 * host's own process: the runner's buffers, timers and child processes live
 * and die with the worker.
 */
export function checkInstalledInSeparateProcess(workerScript: string, job: InstalledPluginJob): Promise<ConformanceReport> {
  return new Promise((resolve, reject) => {
    const child = fork(workerScript, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8');
    });
    let settled = false;
    child.on('message', (answer: WorkerAnswer) => {
      settled = true;
      if (answer.ok) resolve(answer.report);
      else reject(new Error(`the conformance worker failed: ${answer.message}`));
    });
    child.on('error', (e) => {
      if (!settled) reject(new Error(`the conformance worker could not start: ${e.message}`));
      settled = true;
    });
    child.on('exit', (code, signal) => {
      if (!settled)
        reject(new Error(`the conformance worker exited (${signal ?? `code ${code}`}) without a report: ${stderr.slice(-600)}`));
      settled = true;
    });
    child.send(job);
  });
}

/** The worker process's side: takes one job over IPC, answers with the report, exits. */
export function serveOneJob(): void {
  process.once('message', (job: InstalledPluginJob) => {
    checkInstalled(job).then(
      (report) => process.send!({ ok: true, report } satisfies WorkerAnswer, () => process.exit(0)),
      (e: unknown) =>
        process.send!({ ok: false, message: e instanceof Error ? e.message : String(e) } satisfies WorkerAnswer, () => process.exit(1)),
    );
  });
}
