import { checkInitializeResult, initializeParams } from '@host/host-runtime';
import {
  ChatEventType,
  concurrencyOf,
  EventAckSchema,
  matchCommand,
  METHOD_LIST,
  RpcErrorCode,
  RUNTIME_DEFAULTS,
  resolveTimeRef,
  type ConformanceScenario,
  type ChatEvent,
  type ConformanceStep,
  type MessageEvent,
  type RpcErrorName,
  type StdioManifest,
} from '@host/protocol';
import { PluginRun, type Answer, type EventTrack, type RunIsolation } from './plugin-run';
import type { Outcomes } from './report';

/** What a scenario needs to know about the plugin and the machine. */
export interface ScenarioContext {
  packageDir: string;
  manifest: StdioManifest;
  scratchDir: string;
  hostEnv: NodeJS.ProcessEnv;
  hostVersion: string;
  settings: Record<string, unknown>;
  /** See RunOptions.processRecordFile. */
  processRecordFile?: string;
  /** Ends the scenario's process at once when aborted (the suite's caller gave up). */
  signal?: AbortSignal;
  /** See RunOptions.isolation. */
  isolation?: RunIsolation;
}

type Step<K extends ConformanceStep['do']> = Extract<ConformanceStep, { do: K }>;

const RPC_NAMES = new Map<number, string>(Object.entries(RpcErrorCode).map(([name, code]) => [code, name]));
/** A pluginId no plugin has: the handshake for "another" plugin. */
const OTHER_PLUGIN_ID = 'org.conformance.another-plugin';

function describeAnswer(a: Answer): string {
  if (a.lost) return a.lost;
  if (a.error) return `error ${a.error.code}${RPC_NAMES.has(a.error.code) ? ` ${RPC_NAMES.get(a.error.code)}` : ''} "${a.error.message}"`;
  return `result ${truncate(JSON.stringify(a.result) ?? 'undefined')}`;
}

function truncate(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

function ms(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n % 1000 === 0 ? 0 : 1)} s` : `${Math.round(n)} ms`;
}

/**
 * Plays one scenario against a fresh process of the plugin and records the
 * outcome of every check its steps name. A step that cannot apply to this
 * plugin (no handler could be held busy, the run already ended) records a
 * skip with the reason.
 */
export class ScenarioRunner {
  private readonly run: PluginRun;
  private readonly labels = new Map<string, EventTrack[]>();
  private eventCount = 0;
  /** Set when the run cannot go on (the process is gone, stdout polluted): later steps are skipped with this reason. */
  private ended: string | null = null;

  constructor(
    private readonly scenario: ConformanceScenario,
    private readonly ctx: ScenarioContext,
    private readonly out: Outcomes,
  ) {
    this.run = new PluginRun({
      packageDir: ctx.packageDir,
      manifest: ctx.manifest,
      scratchDir: ctx.scratchDir,
      hostStdio: scenario.launch.hostStdio,
      hostEnv: ctx.hostEnv,
      hostVersion: ctx.hostVersion,
      ...(ctx.processRecordFile ? { processRecordFile: ctx.processRecordFile } : {}),
      ...(ctx.isolation ? { isolation: ctx.isolation } : {}),
    });
    ctx.signal?.addEventListener('abort', () => this.run.dispose(), { once: true });
  }

  private get where(): string {
    return `[${this.scenario.id}]`;
  }

  private bound(ref: string): number {
    return resolveTimeRef(ref, { handlerDeadlineMilliseconds: this.ctx.manifest.concurrency?.handlerDeadlineMilliseconds });
  }

  private pass(check: string, text: string): void {
    this.out.pass(check, `${this.where} ${text}`);
  }
  private fail(check: string, text: string): void {
    this.out.fail(check, `${this.where} ${text}`);
  }
  private skip(check: string, text: string): void {
    this.out.skip(check, `${this.where} ${text}`);
  }

  async play(): Promise<void> {
    this.run.start();
    if (this.run.isolation) this.out.isolation = this.run.isolation;
    try {
      for (const step of this.scenario.steps) {
        if (this.ended) {
          // After the run ended, only what the exit itself shows is judged; the rest cannot be.
          const aboutExit = step.do === 'expectExit' || step.do === 'expectOutput' || step.do === 'expectNoProcessLeft';
          if (!(aboutExit && this.run.exit && !this.run.spawnError)) {
            if ('check' in step) this.skip(step.check, `not played: ${this.ended}`);
            continue;
          }
        }
        await this.step(step);
        if (!this.ended && this.run.pollution) this.ended = 'stdout carried something that is not a frame (see stdout.frames-only)';
        if (!this.ended && this.run.spawnError) this.ended = this.run.spawnError;
      }
      this.observe();
    } finally {
      this.run.dispose();
    }
  }

  private async step(step: ConformanceStep): Promise<void> {
    switch (step.do) {
      case 'initialize':
        return this.initialize(step);
      case 'request':
        return this.request(step);
      case 'notify':
        return this.notify(step);
      case 'raw':
        this.run.writeRaw(step.text);
        return;
      case 'deliver':
        return this.deliver(step);
      case 'deliverSubscribed':
        return this.deliverSubscribed(step);
      case 'expectReplies':
        return this.expectReplies(step);
      case 'release':
        for (const t of this.labels.get(step.label) ?? []) t.hold?.release();
        return;
      case 'awaitCompletion':
        return this.awaitCompletion(step);
      case 'expectMarkdownRefusal':
        return this.markdownRefusal(step);
      case 'stop':
        return this.stop(step);
      case 'closeStdin':
        this.run.closeStdin();
        return;
      case 'expectExit':
        return this.expectExit(step);
      case 'expectOutput':
        return this.expectOutput(step);
      case 'expectNoProcessLeft':
        return this.expectNoProcessLeft(step);
    }
  }

  /** Sends a request and waits for its answer within the step's bound; undefined when none came. */
  private async answer(method: string, params: unknown, within: number): Promise<Answer | undefined> {
    let got: Answer | undefined;
    void this.run.request(method, params, (a) => (got = a));
    await this.run.waitFor(() => got !== undefined, within);
    return got;
  }

  /** Judges an answer against `expect`; returns the failure text or null. */
  private judge(
    method: string,
    expect: Step<'request'>['expect'],
    a: Answer | undefined,
    within: number,
    checkResult?: (r: unknown) => string | null,
  ): string | null {
    if (!a) return `no answer to ${method}${this.run.exit || this.run.pollution ? '' : ` within ${ms(within)}`}${this.exitNote()}`;
    if (a.lost) return `${method}: ${a.lost}${this.exitNote()}`;
    if ('result' in expect) {
      if (a.error) return `${method} was answered with ${describeAnswer(a)}; a result was expected`;
      const descriptor = METHOD_LIST.find((m) => m.method === method);
      const parsed = descriptor?.result.safeParse(a.result);
      if (parsed && !parsed.success) return `${method} was answered with an invalid result ${truncate(JSON.stringify(a.result))}`;
      return checkResult ? checkResult(a.result) : null;
    }
    if (!a.error)
      return `${method} was answered with ${describeAnswer(a)}; an error${expect.error === 'any' ? '' : ` ${expect.error} (${RpcErrorCode[expect.error as RpcErrorName]})`} was expected`;
    if (expect.error !== 'any' && a.error.code !== RpcErrorCode[expect.error as RpcErrorName])
      return `${method} was answered with ${describeAnswer(a)}; ${expect.error} (${RpcErrorCode[expect.error as RpcErrorName]}) was expected`;
    return null;
  }

  private exitNote(): string {
    if (this.run.pollution) return ` (stdout was polluted: ${this.run.pollution.bytes})`;
    const e = this.run.exit;
    if (!e) return '';
    if (this.run.spawnError) return ` (${this.run.spawnError})`;
    return ` (the process exited with ${e.signal ?? `code ${e.code}`};${this.run.stderrSummary() || ' no stderr'})`;
  }

  private async initialize(step: Step<'initialize'>): Promise<void> {
    const within = this.bound(step.within);
    const pluginId = step.pluginId === 'own' ? this.ctx.manifest.pluginId : OTHER_PLUGIN_ID;
    const params = initializeParams({
      manifest: this.ctx.manifest,
      pluginId,
      instanceId: this.run.instanceId,
      token: this.run.token,
      hostVersion: this.ctx.hostVersion,
      directories: this.run.directories,
      settings: this.ctx.settings,
    });
    const a = await this.answer('host.initialize', params, within);
    if (!a && this.run.pollution)
      return this.skip(step.check, 'not judged: stdout carried something that is not a frame (see stdout.frames-only)');
    const failure = this.judge('host.initialize', step.expect, a, within, (result) => {
      const checked = checkInitializeResult(result, this.ctx.manifest.pluginId);
      return checked.ok ? null : `the host refuses the handshake: ${checked.message}`;
    });
    if (failure) {
      this.fail(step.check, failure);
      if (step.check === 'handshake.valid') this.ended = 'the handshake failed';
    } else this.pass(step.check, `host.initialize${step.pluginId === 'other' ? ' for another pluginId' : ''}: ${describeAnswer(a!)}`);
  }

  private busy(label: string): string | null {
    const tracks = this.labels.get(label) ?? [];
    if (tracks.length === 0) return `no event of "${label}" was delivered`;
    const held = tracks.filter((t) => t.hold?.holding);
    const declined = tracks.filter((t) => isDeclined(t.ack)).length;
    if (declined > 0)
      return `the plugin declined ${declined} of ${tracks.length} conformance event(s) (${tracks[0]!.event.command ? `command /${tracks[0]!.event.command.name}` : 'a plain message: it declares no command for group chats'}), so no handler ran`;
    if (held.length < tracks.length)
      return `the suite could not hold the plugin's handlers busy: it holds the host's answer to a handler's messages.reply, and ${tracks.length - held.length} of ${tracks.length} handler(s) sent no messages.reply for the conformance event (or had ended)`;
    return null;
  }

  private async request(step: Step<'request'>): Promise<void> {
    if (step.requiresBusy) {
      const why = this.busy(step.requiresBusy);
      if (why) return this.skip(step.check, why);
    }
    const within = this.bound(step.within);
    const a = await this.answer(step.method, step.params, within);
    if (!a && this.run.pollution)
      return this.skip(step.check, 'not judged: stdout carried something that is not a frame (see stdout.frames-only)');
    const failure = this.judge(step.method, step.expect, a, within);
    if (failure) this.fail(step.check, failure);
    else this.pass(step.check, `${step.method}: ${describeAnswer(a!)}`);
  }

  private async notify(step: Step<'notify'>): Promise<void> {
    const within = this.bound(step.within);
    const before = this.run.strayAnswers.length;
    this.run.notify(step.method, step.params);
    const ping = await this.answer('plugin.ping', { nonce: 'after-notification' }, within);
    const stray = this.run.strayAnswers.slice(before);
    if (!ping || ping.lost || ping.error)
      this.fail(
        step.check,
        `after the notification ${step.method}, plugin.ping got ${ping ? describeAnswer(ping) : `no answer within ${ms(within)}`}${this.exitNote()}`,
      );
    else if (stray.length > 0) this.fail(step.check, `the notification ${step.method} was answered: ${stray[0]}`);
    else this.pass(step.check, `${step.method} got no answer and plugin.ping was answered after it`);
  }

  /** The event the host would deliver: the first declared command that applies, else a plain message. */
  private buildEvent(conversation: 'group' | 'c2c'): MessageEvent {
    const n = ++this.eventCount;
    const commands = this.ctx.manifest.commands;
    const first = commands.find((c) => !c.conversationScopes || c.conversationScopes.includes(conversation));
    const text = first ? `${first.prefixes[0] ?? '/'}${first.name} conformance` : 'conformance check';
    const match = matchCommand(text, commands, conversation);
    const group = conversation === 'group';
    const messageId = `conformance-message-${this.scenario.id}-${n}`;
    return {
      eventId: `conformance-${this.scenario.id}-${n}`,
      eventType: 'message.created',
      timestamp: new Date().toISOString(),
      source: 'qqbot',
      bot: { botAccountId: 'conformance-bot', platform: 'qqbot', displayName: 'Conformance' },
      conversation: group
        ? { type: 'group', conversationId: 'conformance-group', groupOpenId: 'CONFORMANCEGROUP' }
        : { type: 'c2c', conversationId: 'conformance-c2c', c2cOpenId: 'CONFORMANCEUSER' },
      sender: { provider: 'qqbot', mentionId: 'CONFORMANCEUSER', displayName: 'Conformance' },
      message: { id: messageId, content: text, attachments: [], mentions: [] },
      messageReference: {
        messageId,
        targetType: group ? 'group' : 'user',
        targetId: group ? 'CONFORMANCEGROUP' : 'CONFORMANCEUSER',
        replyUntil: new Date(Date.now() + RUNTIME_DEFAULTS.handlerDeadlineMilliseconds).toISOString(),
        restrictions: [],
      },
      ...(match ? { command: match.match } : {}),
    };
  }

  private async deliver(step: Step<'deliver'>): Promise<void> {
    if (step.requiresBusy) {
      const why = this.busy(step.requiresBusy);
      if (why) return this.skip(step.check, why);
    }
    const count = typeof step.count === 'number' ? step.count : concurrencyOf(this.ctx.manifest.concurrency).maxConcurrentEvents;
    const within = this.bound(this.run.intercepts && step.withinForInterceptors ? step.withinForInterceptors : step.within);
    const tracks: EventTrack[] = [];
    for (let i = 0; i < count; i++) tracks.push(this.run.deliver(this.buildEvent(step.conversation), step.label, step.hold));
    this.labels.set(step.label, tracks);
    const what = tracks[0]!.event.command ? `command /${tracks[0]!.event.command.name}` : 'a plain message';
    // An interceptor decides in its handler: a held reply before its ACK also shows the handler runs.
    const decided = (t: EventTrack) => t.ack !== undefined || (this.run.intercepts && t.hold?.holding === true);
    await this.run.waitFor(() => tracks.every(decided), within);
    for (const t of tracks) {
      if (!decided(t)) {
        if (this.run.pollution) {
          this.skip(step.check, 'not judged: stdout carried something that is not a frame (see stdout.frames-only)');
          continue;
        }
        this.fail(
          step.check,
          `events.message (${what} in a ${step.conversation} chat) got no answer within ${ms(within)}${this.exitNote()}`,
        );
        continue;
      }
      if (!t.ack) continue;
      const a = t.ack;
      if ('ack' in step.expect) {
        if (a.lost || a.error) {
          this.fail(
            step.check,
            `events.message (${what} in a ${step.conversation} chat) was answered with ${describeAnswer(a)}; an ACK was expected`,
          );
          continue;
        }
        const parsed = EventAckSchema.safeParse(a.result);
        if (!parsed.success) this.fail(step.check, `the ACK ${truncate(JSON.stringify(a.result))} is not a valid ACK`);
        else if (parsed.data.eventId !== t.eventId)
          this.fail(step.check, `the ACK names eventId ${parsed.data.eventId}; the event was ${t.eventId}`);
        else
          this.pass(
            step.check,
            `${what} in a ${step.conversation} chat: ACK accepted=${parsed.data.accepted} after ${ms(a.at - t.sentAt)}`,
          );
      } else {
        const failure = this.judge('events.message', { error: step.expect.error }, a, within);
        if (failure) this.fail(step.check, failure);
        else this.pass(step.check, `an event beyond the plugin's limit: ${describeAnswer(a)}`);
      }
    }
    if (step.hold) {
      // Busy means a handler waits for the held answer; wait until each handler either holds one or has ended.
      const settled = (t: EventTrack) =>
        t.hold?.holding === true ||
        t.completions.length > 0 ||
        t.ack?.error !== undefined ||
        isDeclined(t.ack) ||
        t.ack?.lost !== undefined;
      await this.run.waitFor(() => tracks.every(settled), this.bound('plugin.handlerDeadlineMilliseconds'));
    }
  }

  /**
   * The events of the other types the host would deliver to this plugin: one of each type its manifest subscribes
   * to, in a group chat, with the fields the host gives that type (docs/protocol/v2.md 5.4).
   */
  private buildChatEvents(): ChatEvent[] {
    const subscribed = new Set(this.ctx.manifest.eventSubscriptions.map((s) => s.eventType));
    return ChatEventType.options
      .filter((t) => subscribed.has(t))
      .map((eventType) => {
        const n = ++this.eventCount;
        return {
          eventId: `conformance-${this.scenario.id}-${n}`,
          eventType,
          timestamp: new Date().toISOString(),
          source: 'qqbot',
          bot: { botAccountId: 'conformance-bot', platform: 'qqbot', displayName: 'Conformance' },
          conversation: { type: 'group', conversationId: 'conformance-group', groupOpenId: 'CONFORMANCEGROUP' },
          sender: { provider: 'qqbot', mentionId: 'CONFORMANCEUSER', memberOpenId: 'CONFORMANCEUSER', displayName: 'Conformance' },
          ...(eventType === 'interaction.created'
            ? { interaction: { id: `conformance-click-${this.scenario.id}-${n}`, data: 'conformance', buttonId: 'r0c0' } }
            : {}),
          // The bot removed from a chat can no longer answer in it.
          ...(eventType === 'bot.removed'
            ? {}
            : {
                messageReference: {
                  messageId: `conformance-anchor-${this.scenario.id}-${n}`,
                  targetType: 'group' as const,
                  targetId: 'CONFORMANCEGROUP',
                  replyUntil: new Date(Date.now() + RUNTIME_DEFAULTS.handlerDeadlineMilliseconds).toISOString(),
                  restrictions: [],
                },
              }),
        };
      });
  }

  private async deliverSubscribed(step: Step<'deliverSubscribed'>): Promise<void> {
    const events = this.buildChatEvents();
    if (events.length === 0)
      return this.skip(
        step.check,
        'the manifest subscribes to no event type but message.created, so no events.deliver was sent (a host sends a plugin only the types it subscribes to)',
      );
    const within = this.bound(this.run.intercepts && step.withinForInterceptors ? step.withinForInterceptors : step.within);
    // As a host does, at most the plugin's maxConcurrentEvents at once: the next waits for a handler to end.
    const max = concurrencyOf(this.ctx.manifest.concurrency).maxConcurrentEvents;
    const tracks: EventTrack[] = [];
    this.labels.set(step.label, tracks);
    const inFlight = () => tracks.filter((t) => t.ack === undefined || (isAccepted(t.ack) && t.completions.length === 0)).length;
    for (const e of events) {
      if (inFlight() >= max) await this.run.waitFor(() => inFlight() < max, this.bound('plugin.handlerDeadlineMilliseconds'));
      tracks.push(this.run.deliverChat(e, step.label));
    }
    await this.run.waitFor(() => tracks.every((t) => t.ack !== undefined), within);
    for (const t of tracks) {
      const type = t.chat!.eventType;
      if (!t.ack) {
        if (this.run.pollution) {
          this.skip(step.check, 'not judged: stdout carried something that is not a frame (see stdout.frames-only)');
          continue;
        }
        this.fail(step.check, `events.deliver (${type}) got no answer within ${ms(within)}${this.exitNote()}`);
        continue;
      }
      const a = t.ack;
      if (a.lost || a.error) {
        this.fail(
          step.check,
          `events.deliver (${type}) was answered with ${describeAnswer(a)}; an ACK was expected, as the manifest subscribes to ${type}`,
        );
        continue;
      }
      const parsed = EventAckSchema.safeParse(a.result);
      if (!parsed.success) this.fail(step.check, `the ACK ${truncate(JSON.stringify(a.result))} of ${type} is not a valid ACK`);
      else if (parsed.data.eventId !== t.eventId)
        this.fail(step.check, `the ACK of ${type} names eventId ${parsed.data.eventId}; the event was ${t.eventId}`);
      else this.pass(step.check, `${type}: ACK accepted=${parsed.data.accepted} after ${ms(a.at - t.sentAt)}`);
    }
  }

  private expectReplies(step: Step<'expectReplies'>): void {
    const tracks = this.labels.get(step.label) ?? [];
    const replies = tracks.flatMap((t) => t.replies.map((r) => ({ t, r })));
    if (replies.length === 0)
      return this.skip(
        step.check,
        tracks.length === 0 ? `no event of "${step.label}" was delivered` : 'the handlers sent no reply to these events',
      );
    for (const { t, r } of replies) {
      const type = t.chat?.eventType ?? t.event.eventType;
      if (!r.refusal) {
        this.pass(step.check, `${type}: a ${r.format} reply the host takes`);
        continue;
      }
      if (r.refusal.code !== 'message.reference.unavailable') {
        this.fail(
          step.check,
          `the ${r.format} reply to ${type} was refused with ${r.refusal.code ?? `error ${r.refusal.rpcCode}`}: the provider cannot carry it to a ${r.targetType} (docs/protocol/v2.md 7.3)`,
        );
        continue;
      }
      const completion = t.completions[0];
      if (!completion) this.fail(step.check, `after the refusal, event ${t.eventId} (${type}) was not reported completed`);
      else if (completion.error && completion.error.code !== 'message.reference.unavailable')
        this.fail(
          step.check,
          `the handler of ${type} failed with code ${completion.error.code} ("${truncate(completion.error.message, 100)}"); the host refused its reply with message.reference.unavailable, and that code should reach the plugin`,
        );
      else
        this.pass(
          step.check,
          `${type} takes no reply: it was refused with message.reference.unavailable and the plugin completed the event ${completion.error ? 'with that code' : 'without an error'}`,
        );
    }
  }

  private async awaitCompletion(step: Step<'awaitCompletion'>): Promise<void> {
    const tracks = this.labels.get(step.label) ?? [];
    const within = this.bound(step.within);
    const accepted = tracks.filter((t) => isAccepted(t.ack));
    if (tracks.length === 0) return this.skip(step.check, `no event of "${step.label}" was delivered`);
    await this.run.waitFor(() => accepted.every((t) => t.completions.length > 0), within, { untilExit: true });
    for (const t of tracks) {
      if (isAccepted(t.ack)) {
        if (t.completions.length === 0) {
          this.fail(step.check, `event ${t.eventId} was accepted but no events.completed came within ${ms(within)}${this.exitNote()}`);
          // Every later wait would cost another handler deadline: the rest of this run is not played.
          this.ended ??= `event ${t.eventId} was never reported completed (see events.completion)`;
        } else if (t.completions.length > 1)
          this.fail(step.check, `event ${t.eventId} was reported completed ${t.completions.length} times`);
        else
          this.pass(
            step.check,
            `event ${t.eventId}: events.completed after ${ms(t.completions[0]!.at - t.sentAt)}${t.completions[0]!.error ? ` with error ${t.completions[0]!.error.code}` : ''}`,
          );
      } else if (isDeclined(t.ack)) {
        if (t.completions.length > 0) this.fail(step.check, `event ${t.eventId} was declined, yet events.completed followed`);
        else this.pass(step.check, `event ${t.eventId} was declined and nothing followed`);
      } else if (!t.ack && this.run.intercepts && t.completions.length === 0) {
        this.fail(step.check, `event ${t.eventId} got neither an ACK nor events.completed within ${ms(within)}${this.exitNote()}`);
      }
    }
  }

  private markdownRefusal(step: Step<'expectMarkdownRefusal'>): void {
    const tracks = this.labels.get(step.label) ?? [];
    const markdown = tracks.flatMap((t) =>
      t.replies.filter((r) => r.format === 'markdown' && (r.targetType === 'user' || r.targetType === 'direct')).map((r) => ({ t, r })),
    );
    if (markdown.length === 0)
      return this.skip(
        step.check,
        'the plugin sent no Markdown to the one-to-one chat (it replied in text, or not at all), so there was no refusal to see',
      );
    for (const { t, r } of markdown) {
      if (r.refusal?.code !== 'message.format.unsupported_target') {
        this.fail(
          step.check,
          `the host pieces answered Markdown to a c2c chat with ${r.refusal?.code ?? 'success'}; message.format.unsupported_target is documented`,
        );
        continue;
      }
      const completion = t.completions[0];
      if (!completion) this.fail(step.check, `after the refusal, event ${t.eventId} was not reported completed`);
      else if (completion.error && completion.error.code !== 'message.format.unsupported_target')
        this.fail(
          step.check,
          `the handler failed with code ${completion.error.code} ("${truncate(completion.error.message, 100)}"); the host refused with message.format.unsupported_target, and that code should reach the plugin`,
        );
      else
        this.pass(
          step.check,
          `Markdown to a c2c chat was refused with MessageRejected (-32005) message.format.unsupported_target; the plugin completed the event ${completion.error ? 'with that code' : 'after handling it'}`,
        );
    }
  }

  private async stop(step: Step<'stop'>): Promise<void> {
    const within = this.bound(step.within);
    const grace = this.bound(step.grace);
    const a = await this.answer('plugin.stop', { reason: 'operator', graceMilliseconds: grace }, within);
    const failure = this.judge('plugin.stop', step.expect, a, within);
    if (failure) this.fail(step.check, failure);
    else this.pass(step.check, `plugin.stop: ${describeAnswer(a!)}`);
  }

  private async expectExit(step: Step<'expectExit'>): Promise<void> {
    const within = this.bound(step.within);
    const from = performance.now();
    await this.run.waitFor(() => this.run.exit !== null, within, { untilExit: true });
    const e = this.run.exit;
    if (this.run.spawnError) return this.fail(step.check, this.run.spawnError);
    if (!e) return this.fail(step.check, `the process still ran ${ms(within)} later${this.run.stderrSummary()}`);
    const status = e.signal ? `signal ${e.signal}` : `code ${e.code}`;
    const took = ms(Math.max(0, e.at - from));
    if (step.code === 'nonZero' && (e.code === 0 || e.code === null))
      this.fail(step.check, `the process exited with ${status}; a non-zero status was expected`);
    else if (step.code === 'zero' && e.code !== 0) this.fail(step.check, `the process exited with ${status}; 0 was expected`);
    else this.pass(step.check, `exited with ${status} within ${took}`);
    this.ended ??= 'the process exited';
  }

  private expectOutput(step: Step<'expectOutput'>): void {
    let failed = false;
    if (step.stdout === 'empty' && this.run.stdoutBytes > 0) {
      failed = true;
      this.fail(step.check, `stdout carried ${this.run.stdoutBytes} bytes; it must stay empty`);
    }
    if (step.stderr === 'nonEmpty' && this.run.stderrBytes === 0) {
      failed = true;
      this.fail(step.check, 'stderr stayed empty; a short help text belongs there');
    }
    if (!failed) this.pass(step.check, `stdout empty, ${this.run.stderrBytes} bytes of help on stderr`);
  }

  private async expectNoProcessLeft(step: Step<'expectNoProcessLeft'>): Promise<void> {
    if (this.run.spawnError || this.run.pid === undefined) return this.skip(step.check, 'the process did not start');
    if (!this.run.exit) return this.skip(step.check, 'the process did not exit by itself, so the suite ended it');
    // The plugin ends its helpers before it exits; allow the time the host allows a stop to complete. Nothing
    // on the pipes tells when a helper ends, so the group is looked at every 50 ms.
    const deadline = performance.now() + RUNTIME_DEFAULTS.stopGraceMilliseconds;
    let gone = !this.run.groupAlive();
    while (!gone && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      gone = !this.run.groupAlive();
    }
    if (gone) this.pass(step.check, 'no process of the group was left');
    else
      this.fail(
        step.check,
        `processes of the plugin's group (pgid ${this.run.pid}) still ran ${ms(RUNTIME_DEFAULTS.stopGraceMilliseconds)} after the plugin exited`,
      );
  }

  /** The checks observed over the whole run. */
  private observe(): void {
    for (const [check, list] of this.run.observed) for (const text of list) this.fail(check, text);
    for (const check of this.scenario.observe) {
      if (this.run.observed.has(check)) continue;
      switch (check) {
        case 'stdout.frames-only':
          if (this.run.spawnError) this.skip(check, 'the process did not start');
          else this.pass(check, `${this.run.stdoutBytes} bytes on stdout, every one part of a valid frame`);
          break;
        case 'events.decision-first': {
          const acked = [...this.run.events.values()].filter((t) => isAccepted(t.ack));
          if (acked.length === 0) this.skip(check, 'the plugin accepted no event, so there was no decision to order');
          else this.pass(check, `${acked.length} accepted event(s), each ACKed before its replies and completion`);
          break;
        }
        case 'events.reply-token':
          if (this.run.calls === 0) this.skip(check, 'the plugin made no plugin-to-host call');
          else this.pass(check, `${this.run.calls} plugin-to-host call(s), each with the runtime token and a delivered eventId`);
          break;
      }
    }
  }
}

function isAccepted(a: Answer | undefined): boolean {
  return !!a && !a.error && !a.lost && (a.result as { accepted?: unknown } | undefined)?.accepted === true;
}

function isDeclined(a: Answer | undefined): boolean {
  return !!a && !a.error && !a.lost && (a.result as { accepted?: unknown } | undefined)?.accepted === false;
}
