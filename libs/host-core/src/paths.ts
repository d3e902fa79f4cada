import { join } from 'node:path';

/**
 * Where the host keeps everything, under one data directory. Packages live in
 * plugins-v2/<pluginId>/; a plugin's data, config and cache live outside its
 * package folder, so install, update and uninstall never touch them.
 */
export interface HostPaths {
  readonly dataDir: string;
  /** Installed packages: `<data>/plugins-v2/<pluginId>/`. */
  packageDir(pluginId: string): string;
  readonly packagesRoot: string;
  /** Staging area on the same file system as packagesRoot, so renames are atomic. */
  readonly stagingRoot: string;
  /** Previous versions kept on update: `<data>/backups/<pluginId>/<timestamp>-<version>/`. */
  backupsDir(pluginId: string): string;
  dataDirOf(pluginId: string): string;
  configDirOf(pluginId: string): string;
  cacheDirOf(pluginId: string): string;
  logDirOf(pluginId: string): string;
  /** Host state (registry, admin token hash). */
  readonly stateDir: string;
}

export function hostPaths(dataDir: string): HostPaths {
  return {
    dataDir,
    packagesRoot: join(dataDir, 'plugins-v2'),
    stagingRoot: join(dataDir, 'plugins-v2', '.staging'),
    stateDir: join(dataDir, 'state'),
    packageDir: (id) => join(dataDir, 'plugins-v2', id),
    backupsDir: (id) => join(dataDir, 'backups', id),
    dataDirOf: (id) => join(dataDir, 'plugin-data', id, 'data'),
    configDirOf: (id) => join(dataDir, 'plugin-data', id, 'config'),
    cacheDirOf: (id) => join(dataDir, 'plugin-data', id, 'cache'),
    logDirOf: (id) => join(dataDir, 'logs', id),
  };
}
