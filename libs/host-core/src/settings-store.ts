/** A plugin's stored settings values, secrets included, as the admin API validated them. */
export type SettingsValues = Record<string, string | number | boolean>;

/**
 * Plugin settings: one set of values per plugin, kept across updates and
 * uninstall. Validation against the manifest is the admin API's job; a store
 * keeps values. The embedded default is
 * `plugin-data/<pluginId>/config/settings.json`.
 */
export interface SettingsStore {
  /** The stored values; `{}` when none are stored. */
  get(pluginId: string): Promise<SettingsValues>;
  /**
   * Replaces the values by `change(current)` atomically: no concurrent change
   * is lost. `change` may throw to refuse (nothing is written); like
   * `RegistryStore.update`, it must have no side effects, since a store may
   * call it again with newer values. Returns the values stored.
   */
  update(pluginId: string, change: (current: SettingsValues) => SettingsValues): Promise<SettingsValues>;
  /** Forgets the plugin's values (its data is being deleted). */
  delete(pluginId: string): Promise<void>;
}
