import type { MessageProvider } from '@host/host-core';

/** The providers of one host, by id. */
export class ProviderRegistry {
  private readonly providers = new Map<string, MessageProvider>();

  register(provider: MessageProvider): void {
    if (this.providers.has(provider.id)) throw new Error(`A message provider "${provider.id}" is already registered.`);
    this.providers.set(provider.id, provider);
  }

  get(id: string): MessageProvider | undefined {
    return this.providers.get(id);
  }

  ids(): string[] {
    return [...this.providers.keys()];
  }

  /** The provider that has the bot account `botAccountId` (the first registered, should two claim it). */
  forBotAccount(botAccountId: string): MessageProvider | undefined {
    for (const p of this.providers.values()) if (p.botAccountIds().includes(botAccountId)) return p;
    return undefined;
  }

  /** Every bot account of every provider, in registration order. */
  botAccountIds(): string[] {
    return [...this.providers.values()].flatMap((p) => p.botAccountIds());
  }
}
