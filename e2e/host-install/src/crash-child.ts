// A real process that installs or updates a package with the real installer
// and SIGKILLs itself right after a chosen step (or never). Started by
// crash-safety.spec.ts.
import { join } from 'node:path';
import { hostPaths, type HostError } from '@host/host-core';
import { PluginInstaller, type InstallStep, type PendingUpdate } from '@host/host-installer';
import { createUnavailableRuntime } from '@host/host-installer/testing';
import { FilePendingUpdateStore, JsonRegistryStore } from '@host/host-store';
import { versionedPackage } from './versioned-package';

async function run(): Promise<void> {
  const [dataDir, version, crashAt, files] = process.argv.slice(2) as [string, string, InstallStep | 'none', string];
  const paths = hostPaths(dataDir);
  const store = await JsonRegistryStore.open(paths.stateDir);
  const installer = new PluginInstaller({
    paths,
    store,
    pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
    runtime: createUnavailableRuntime(),
    onStep: (step) => {
      if (step === crashAt) process.kill(process.pid, 'SIGKILL');
    },
  });
  await installer.init();
  const archive = versionedPackage(version, Number(files));
  try {
    await installer.install(archive);
  } catch (e) {
    if ((e as HostError).code !== 'UPDATE_CONFIRMATION_REQUIRED') throw e;
    await installer.confirmUpdate(((e as HostError).details as { pendingUpdate: PendingUpdate }).pendingUpdate.id);
  }
  await store.close();
}

run().then(
  () => process.exit(0),
  (e: Error) => {
    console.error(e.stack);
    process.exit(1);
  },
);
