import { randomBytes } from 'node:crypto';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { StartError } from '../process/plugin-process';
import type { ProcessGroups } from '../process/process-groups';
import { LocalProcessRunner, type LaunchSpec, type ProcessRunner, type RunningProcess } from '../process/runner';
import type { RunGroup } from './cgroups';
import { PLUGIN_UIDS_FILE, PluginUids } from './plugin-uids';
import { findRuntime, giveFolders, openPath, sealPackage, unreachableParent } from './prepare';
import { strongestMode, type IsolationSupport } from './probe';
import { sandboxArgs } from './sandbox-args';
import {
  formatLimits,
  narrowerNetwork,
  type IsolationMode,
  type IsolationSettings,
  type IsolationStatus,
  type LimitHit,
  type LimitMechanism,
} from './settings';

/**
 * The first link of every isolated plugin's start: joins the cgroup(s) named
 * before `--` as root, then runs the rest. The umask goes back to 022 so the
 * folders bubblewrap makes for the sandbox's root (/etc for its few files)
 * can be searched by the plugin's uid; the host itself keeps 077.
 */
const JOIN_CGROUPS = 'umask 022; while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/**
 * Starts each plugin in the mode the machine allows (see IsolationMode): a
 * chain of small programs that each exec the next, so the plugin keeps the
 * pid the host spawned and its process group: `sh` joins the run's cgroup,
 * `prlimit` sets rlimits, `bwrap` builds the sandbox, `setpriv` drops to the
 * plugin's uid (no groups, no capabilities, no new privileges), then the
 * plugin's command.
 */
export interface IsolatingRunnerOptions {
  /** Each plugin's uid, when another part of the host chose it (the doctor's worker gets the host's choice); default: state/plugin-uids.json. */
  uidOf?: (pluginId: string) => number;
  /** Folders besides the data directory whose own folders other users may search on the way to a plugin's (own-user). */
  openRoots?: readonly string[];
}

export class IsolatingProcessRunner implements ProcessRunner {
  readonly mode: IsolationMode;
  private readonly local: LocalProcessRunner;
  private readonly uids: { uidOf(pluginId: string): number } | null;
  private readonly openRoots: readonly string[];

  constructor(
    groups: ProcessGroups,
    private readonly support: IsolationSupport,
    private readonly settings: IsolationSettings,
    stateDir: string,
    options: IsolatingRunnerOptions = {},
  ) {
    this.local = new LocalProcessRunner(groups);
    this.openRoots = [dirname(stateDir), ...(options.openRoots ?? [])];
    const strongest = strongestMode(support);
    const requested = settings.request === 'auto' ? strongest : settings.request;
    const problem = requested === 'sandbox' ? support.problems.sandbox : requested === 'own-user' ? support.problems.ownUser : undefined;
    if (problem) throw new Error(`HOST_PLUGIN_ISOLATION=${requested} is not available on this machine: ${problem}`);
    this.mode = requested;
    this.uids =
      requested === 'same-user'
        ? null
        : options.uidOf
          ? { uidOf: options.uidOf }
          : new PluginUids(join(stateDir, PLUGIN_UIDS_FILE), settings.uidRange);
  }

  /** How limits are enforced for every run. */
  get limitMechanism(): LimitMechanism {
    if (this.support.cgroups) return this.support.cgroups.version === 'v2' ? 'cgroup-v2' : 'cgroup-v1';
    return this.support.prlimit ? 'rlimit' : 'none';
  }

  start(spec: LaunchSpec): RunningProcess {
    const plugin = spec.plugin;
    if (!plugin) return this.local.start(spec);
    const { limits } = this.settings;
    const mode = this.mode;
    const uid = this.uids?.uidOf(plugin.pluginId);
    const own = [plugin.directories.pluginDataDirectory, plugin.directories.pluginConfigDirectory, plugin.directories.pluginCacheDirectory];
    const network = mode === 'sandbox' ? narrowerNetwork(plugin.network, this.settings.network) : 'any';
    const env: NodeJS.ProcessEnv = { ...spec.env };
    let command = spec.command;
    const inner: string[] = [];
    if (uid !== undefined) {
      try {
        sealPackage(plugin.directories.pluginDirectory);
        giveFolders(own, uid);
      } catch (e) {
        throw new StartError('PLUGIN_ISOLATION_FAILED', `could not prepare the folders of user ${uid}: ${(e as Error).message}`);
      }
      // A program of the package (a Go executable) is the plugin's own: sealed readable and executable above,
      // mounted with the package in the sandbox, and reached through the package folder checked below.
      const runtime = insideFolder(plugin.directories.pluginDirectory, spec.command)
        ? { file: spec.command }
        : findRuntime(spec.command, spec.env['PATH']);
      if (!runtime) {
        throw new StartError(
          'PLUGIN_COMMAND_NOT_FOUND',
          `command "${spec.command}" was not found on PATH in a folder other users can reach; install the runtime system-wide (e.g. /usr/bin)`,
        );
      }
      command = runtime.file;
      // The host's home is not the plugin's; its cache folder is.
      env['HOME'] = plugin.directories.pluginCacheDirectory;
      delete env['TMPDIR'];
      if (mode === 'sandbox') {
        const readOnly = [
          plugin.directories.pluginDirectory,
          ...(plugin.readOnly ?? []),
          ...(runtime.installRoot ? [runtime.installRoot] : []),
        ];
        inner.push(
          this.support.bwrap!,
          ...sandboxArgs({
            readOnly,
            writable: own,
            network,
            cwd: spec.cwd,
            tmpBytes: this.support.bwrapSize ? limits.memoryBytes : 0,
          }),
          '--',
        );
      } else {
        for (const path of [plugin.directories.pluginDirectory, spec.cwd, ...own, ...(plugin.readOnly ?? [])]) {
          // The data directory's own folders may be searched (0711: not listed); its parents are the operator's.
          for (const root of this.openRoots) openPath(root, path);
          const blocked = unreachableParent(join(path, '.'));
          if (blocked) {
            throw new StartError(
              'PLUGIN_ISOLATION_FAILED',
              `user ${uid} cannot reach ${path}: ${blocked} is not searchable by other users; chmod o+x ${blocked} or put the data directory elsewhere`,
            );
          }
        }
      }
      const id = String(uid);
      inner.push(
        this.support.setpriv!,
        '--reuid',
        id,
        '--regid',
        id,
        '--clear-groups',
        '--inh-caps=-all',
        '--bounding-set=-all',
        '--no-new-privs',
        '--',
      );
    }
    let group: RunGroup | null = null;
    const chain: string[] = [];
    if (this.support.cgroups) {
      try {
        group = this.support.cgroups.create(`${plugin.pluginId}.${randomBytes(4).toString('hex')}`, limits);
      } catch (e) {
        throw new StartError('PLUGIN_ISOLATION_FAILED', `could not create the plugin's cgroup: ${(e as Error).message}`);
      }
    }
    if (group || uid !== undefined) chain.push('/bin/sh', '-c', JOIN_CGROUPS, 'sh', ...(group?.procsFiles ?? []), '--');
    if (this.support.prlimit) {
      const rl = [`--nofile=${limits.openFiles}:${limits.openFiles}`];
      if (!group && limits.memoryBytes > 0) rl.push(`--data=${limits.memoryBytes}:${limits.memoryBytes}`);
      // RLIMIT_NPROC counts every process of the uid, so only a uid of its own may get it.
      if (!group && uid !== undefined && limits.processes > 0) rl.push(`--nproc=${limits.processes}:${limits.processes}`);
      if (limits.cpuSeconds > 0) rl.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 5}`);
      chain.push(this.support.prlimit, ...(limits.openFiles > 0 ? rl : rl.slice(1)));
    }
    const argv = [...chain, ...inner, command, ...spec.args];
    const child = this.local.start({ command: argv[0]!, args: argv.slice(1), cwd: spec.cwd, env });
    const mechanism: LimitMechanism = group ? this.limitMechanism : this.support.prlimit ? 'rlimit' : 'none';
    const isolation: IsolationStatus = {
      mode,
      ...(uid !== undefined ? { uid } : {}),
      network,
      limits: mechanism,
      summary: `${mode === 'sandbox' ? 'sandbox' : mode === 'own-user' ? 'own user' : "the host's user"}${uid !== undefined ? ` (uid ${uid})` : ''}, network ${
        mode === 'sandbox' ? network : 'not restricted'
      }, limits through ${mechanism}: ${formatLimits(limits)}`,
    };
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    child.onExit((code, signal) => void (exit = { code, signal }));
    return {
      ...child,
      pid: child.pid,
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      isolation,
      limitHit: (): LimitHit | undefined => {
        if (group && group.oomKills() > 0) return 'memory';
        const x = exit as { code: number | null; signal: NodeJS.Signals | null } | null;
        // bwrap reports a child killed by a signal as 128 + its number; SIGXCPU is 24.
        if (limits.cpuSeconds > 0 && (x?.signal === 'SIGXCPU' || (mode === 'sandbox' && x?.code === 128 + 24))) return 'cpu';
        return undefined;
      },
      release: () => {
        child.release();
        group?.remove();
      },
    };
  }
}

/** Whether `file` is an absolute path inside `folder`. */
function insideFolder(folder: string, file: string): boolean {
  if (!isAbsolute(file)) return false;
  const rel = relative(folder, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
