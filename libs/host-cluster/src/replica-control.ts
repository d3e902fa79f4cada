import { randomUUID } from 'node:crypto';
import type { PluginRuntime, RuntimeStatus, SettingsDelivery, StopReason } from '@host/host-core';
import type { StdioPluginRuntime } from '@host/host-runtime';
import { RUNTIME_DEFAULTS } from '@host/protocol';
import type { ClusterLog, LeaseKeeper } from './lease-keeper';
import type { ControlAction, ControlAnswer, QueueNotice } from './queue-notices';
import type { SqlDeliveryQueue } from './sql-delivery-queue';

export interface ReplicaControlOptions {
  keeper: Pick<
    LeaseKeeper,
    'replica' | 'holds' | 'lease' | 'readLease' | 'takeHere' | 'stopHere' | 'status' | 'withReplica' | 'answered' | 'refreshPlugins'
  >;
  queue: Pick<SqlDeliveryQueue, 'control' | 'answer'>;
  /** The local runtime (attached after the cluster is made). */
  runtime: () => StdioPluginRuntime;
  log: ClusterLog;
}

/** The plugin's status in a holder's answer to a stop or restart (undefined when it could not act). */
const statusIn = (answer: ControlAnswer | undefined): RuntimeStatus | undefined => (answer && 'state' in answer ? answer : undefined);
/** What became of the settings, in a holder's answer to a settings request (undefined when it could not act). */
const settingsIn = (answer: ControlAnswer | undefined): SettingsDelivery | undefined =>
  answer && !('state' in answer) ? answer : undefined;

/**
 * The runtime the admin API and the installer act on, in a cluster: start
 * takes the plugin's lease here (unless another replica runs it), while stop,
 * restart and settings of a plugin another replica runs are asked of that
 * replica (a notification to it, answered by one back once it acted); the
 * status is the same on every replica. It also answers what other replicas ask
 * of the plugins this one runs.
 */
export class ReplicaControl {
  /** Control requests this replica waits for an answer to, by id. */
  private readonly answers = new Map<string, (answer: ControlAnswer) => void>();

  constructor(private readonly o: ReplicaControlOptions) {}

  /** The runtime facade. */
  runtime(): PluginRuntime {
    const rt = this.o.runtime();
    const k = this.o.keeper;
    return {
      start: async (id) => {
        if (!(await k.takeHere(id))) return k.status(id) ?? { state: 'starting', crashCount: 0 };
        const status = k.withReplica(await rt.start(id));
        await k.refreshPlugins().catch(() => undefined);
        return status;
      },
      stop: async (id, reason?: StopReason) => {
        if (!k.holds(id)) {
          // The replica running it stops it and answers with the plugin's state (NOTIFY both ways, no polling).
          const lease = await k.readLease(id);
          if (!lease?.live || lease.holder === '' || (reason !== undefined && reason !== 'operator'))
            return k.status(id) ?? rt.stop(id, reason);
          const answered = statusIn(await this.ask(id, lease.holder, 'stop', RUNTIME_DEFAULTS.stopGraceMilliseconds + 3_000));
          await k.readLease(id).catch(() => undefined);
          return answered ?? k.status(id) ?? { state: 'stopped', crashCount: 0 };
        }
        // An operator's stop gives the lease up; an update's stop keeps it (the plugin starts again here).
        if (reason === undefined || reason === 'operator') return k.stopHere(id);
        return k.withReplica(await rt.stop(id, reason));
      },
      restart: async (id) => {
        if (k.holds(id)) return k.withReplica(await rt.restart(id));
        const lease = k.lease(id);
        if (!lease?.live || lease.holder === '') return this.runtime().start(id);
        // Answered once the replica running it has restarted it (its stop grace and the new start).
        const answered = statusIn(
          await this.ask(
            id,
            lease.holder,
            'restart',
            RUNTIME_DEFAULTS.stopGraceMilliseconds + RUNTIME_DEFAULTS.initializeTimeoutMilliseconds + 3_000,
          ),
        );
        // The holder's state as it answered is the newest (its publication with the lease may still be on its way).
        if (answered) k.answered(id, lease, answered);
        return answered ?? k.status(id) ?? { state: 'starting', crashCount: 0 };
      },
      status: (id) => k.status(id),
      isRunning: (id) => k.holds(id) && rt.isRunning(id),
      applySettings: async (id): Promise<SettingsDelivery> => {
        if (k.holds(id)) return rt.applySettings(id);
        const lease = k.lease(id);
        if (!lease?.live || lease.holder === '') return rt.applySettings(id);
        // The replica running it gives the plugin its settings and answers what became of them.
        const delivery = settingsIn(await this.ask(id, lease.holder, 'settings', RUNTIME_DEFAULTS.requestTimeoutMilliseconds + 2_000));
        return (
          delivery ?? {
            status: 'restartRequired',
            message: `${id} runs on replica ${lease.holder}, which did not say whether it took the new settings; restart ${id} (POST /api/plugins/${id}/restart) to apply them.`,
          }
        );
      },
      stopAll: (reason) => rt.stopAll(reason),
    };
  }

  /** An answer to a request of this replica. */
  onAnswer(n: Extract<QueueNotice, { k: 'answer' }>): void {
    if (n.to === this.o.keeper.replica) this.answers.get(n.id)?.(n.answer);
  }

  /** Another replica asks this one to act on a plugin it runs: it acts, and answers when asked to. */
  onControl(n: Extract<QueueNotice, { k: 'control' }>): void {
    if (n.to !== this.o.keeper.replica || !this.o.keeper.holds(n.p)) return;
    const rt = this.o.runtime();
    const k = this.o.keeper;
    const act: () => Promise<ControlAnswer> = {
      stop: () => k.stopHere(n.p).then((s) => k.withReplica(s)),
      restart: () => rt.restart(n.p).then((s) => k.withReplica(s)),
      settings: () => rt.applySettings(n.p),
    }[n.action];
    const answerTo = n.id !== undefined && n.from !== undefined ? { id: n.id, from: n.from } : undefined;
    void act()
      .catch((e: Error) => {
        this.o.log('warn', `could not ${n.action} ${n.p} as another replica asked: ${e.message}`);
        return null;
      })
      .then(async (result) => {
        // Answered at once: the asking replica's request returns as soon as this one acted.
        if (answerTo) await this.o.queue.answer(n.p, answerTo.from, answerTo.id, result);
      })
      .catch((e: Error) => this.o.log('warn', `could not answer the ${n.action} of ${n.p}: ${e.message}`));
  }

  /**
   * Asks the replica holding `pluginId`'s lease to act on it (NOTIFY) and waits
   * for its answer (NOTIFY back, sent once it acted); undefined when none came
   * within `timeoutMs` (the holder died, or its answer was lost).
   */
  private async ask(pluginId: string, holder: string, action: ControlAction, timeoutMs: number): Promise<ControlAnswer | undefined> {
    const answerId = randomUUID();
    const answered = new Promise<{ answer: ControlAnswer } | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      timer.unref();
      this.answers.set(answerId, (answer) => {
        clearTimeout(timer);
        resolve({ answer });
      });
    });
    try {
      await this.o.queue.control(pluginId, holder, action, { id: answerId, from: this.o.keeper.replica });
      const got = await answered;
      this.o.log(
        got ? 'info' : 'warn',
        got
          ? `cluster: replica ${holder} answered the ${action} of ${pluginId}`
          : `cluster: replica ${holder} did not answer the ${action} of ${pluginId} in ${timeoutMs} ms`,
      );
      return got?.answer ?? undefined;
    } finally {
      this.answers.delete(answerId);
    }
  }
}
