/** Splits `pluginId`, `msg_type`, `message.format.unsupported_target`, `SDK_NOT_INITIALIZED` into lowercase words. */
export function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}
