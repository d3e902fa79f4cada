import type { OutgoingMessage, OutgoingMessageInput, Target } from '@host/protocol';
import { normalizeParsedMessage, type NormalizedMessage } from './normalize';
import { qqbotRenderer } from './qqbot';
import type { ProviderBody, ProviderRenderer } from './renderer';
import type { MessageResult } from './result';
import { parseOutgoingMessage, parseTarget } from './validate';

/**
 * Renderers by provider name. Hosts and tests make their own instances; the
 * module-level functions use `defaultRegistry` unless given one, so nothing
 * global has to be reset between tests.
 */
export class RendererRegistry {
  private readonly renderers = new Map<string, ProviderRenderer>();

  constructor(renderers: Iterable<ProviderRenderer> = []) {
    for (const r of renderers) this.register(r);
  }

  /** Adds a renderer. A second renderer for the same provider is refused: replacing one silently would hide a wiring mistake. */
  register(renderer: ProviderRenderer): void {
    if (this.renderers.has(renderer.provider)) {
      throw new Error(
        `A renderer for provider "${renderer.provider}" is already registered. Use a new RendererRegistry to render differently.`,
      );
    }
    this.renderers.set(renderer.provider, renderer);
  }

  get(provider: string): ProviderRenderer | undefined {
    return this.renderers.get(provider);
  }

  providers(): string[] {
    return [...this.renderers.keys()];
  }

  /**
   * Validates the target and the message, normalises and renders. Checks run
   * in that order: target shape, message shape, normalisation, provider rules.
   * An unknown provider throws: it is a host wiring error (providers are
   * configured at start-up, see `get`), not something a plugin can cause.
   */
  render(provider: string, message: OutgoingMessageInput, target: Target): MessageResult<ProviderBody> {
    const renderer = this.require(provider);
    const t = parseTarget(target);
    if (!t.ok) return t;
    const m = parseOutgoingMessage(message);
    if (!m.ok) return m;
    return this.renderNormalizedWith(renderer, normalizeParsedMessage(m.value), t.value);
  }

  /**
   * As `render`, for a message and target that already passed the protocol
   * schemas (the host's RPC params and HTTP responses embed them): skips the
   * second schema pass on the hot path.
   */
  renderParsed(
    provider: string,
    message: Pick<OutgoingMessage, 'format' | 'parts' | 'keyboard'>,
    target: Target,
  ): MessageResult<ProviderBody> {
    return this.renderNormalizedWith(this.require(provider), normalizeParsedMessage(message), target);
  }

  private renderNormalizedWith(
    renderer: ProviderRenderer,
    normalized: MessageResult<NormalizedMessage>,
    target: Target,
  ): MessageResult<ProviderBody> {
    return normalized.ok ? renderer.render(normalized.value, target) : normalized;
  }

  private require(provider: string): ProviderRenderer {
    const renderer = this.renderers.get(provider);
    if (!renderer) {
      const known =
        this.providers()
          .map((p) => `"${p}"`)
          .join(', ') || 'none';
      throw new Error(
        `No message renderer is registered for provider "${provider}" (registered: ${known}). Register one with registerRenderer().`,
      );
    }
    return renderer;
  }
}

/** A registry holding the built-in renderers (QQ Bot). */
export function createDefaultRegistry(): RendererRegistry {
  return new RendererRegistry([qqbotRenderer]);
}

/** The registry the module-level functions use when none is passed. */
export const defaultRegistry = createDefaultRegistry();

export function registerRenderer(renderer: ProviderRenderer, registry: RendererRegistry = defaultRegistry): void {
  registry.register(renderer);
}

export function getRenderer(provider: string, registry: RendererRegistry = defaultRegistry): ProviderRenderer | undefined {
  return registry.get(provider);
}

/** Validates, normalises and renders `message` for `provider` and `target`. See RendererRegistry.render. */
export function renderMessage(
  provider: string,
  message: OutgoingMessageInput,
  target: Target,
  registry: RendererRegistry = defaultRegistry,
): MessageResult<ProviderBody> {
  return registry.render(provider, message, target);
}

/** Renders a message and target that already passed the protocol schemas. See RendererRegistry.renderParsed. */
export function renderParsedMessage(
  provider: string,
  message: Pick<OutgoingMessage, 'format' | 'parts' | 'keyboard'>,
  target: Target,
  registry: RendererRegistry = defaultRegistry,
): MessageResult<ProviderBody> {
  return registry.renderParsed(provider, message, target);
}
