/**
 * Capability bit flags of an HTTP plugin manifest. An HTTP plugin must declare
 * ReceiveMessages and HttpTransport (1 | 8 = 9).
 */
export const Capability = {
  /** Receives message events at POST /host/plugin/events/message. */
  ReceiveMessages: 1,
  /** May address outbound messages to targets other than the event's conversation. */
  SendMessages: 2,
  /** May answer `intercepted: true` to stop lower-priority plugins. */
  InterceptMessages: 4,
  /** Speaks the HTTP transport. */
  HttpTransport: 8,
} as const;

export type CapabilityName = keyof typeof Capability;

/** Every defined bit; a manifest with other bits set is refused. */
export const ALL_CAPABILITIES = Object.values(Capability).reduce((a, b) => a | b, 0);
/** Bits an HTTP plugin must declare. */
export const REQUIRED_HTTP_CAPABILITIES = Capability.ReceiveMessages | Capability.HttpTransport;

export function hasCapability(flags: number, name: CapabilityName): boolean {
  return (flags & Capability[name]) === Capability[name];
}

/** Names of the bits set in `flags`, in bit order. */
export function capabilityNames(flags: number): CapabilityName[] {
  return (Object.keys(Capability) as CapabilityName[]).filter((n) => hasCapability(flags, n));
}
