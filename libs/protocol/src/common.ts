import { z } from 'zod';
import { LIMITS } from './limits';

/** A non-empty string without control characters (ids, names, labels). */
export const NonBlankString = z
  .string()
  // abort: an empty string is reported once, not also as "blank".
  .min(1, { abort: true })
  .refine((s) => s.trim().length > 0, { message: 'must not be blank' })
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), { message: 'must not contain control characters' });

/** Semantic version 2.0.0 (`1.2.3`, `2.0.0-beta.1`, `1.0.0+build.5`). */
export const SemVer = z
  .string()
  .regex(/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/, {
    message: 'must be a semantic version such as 1.0.0',
  });

/**
 * Plugin id: lowercase dotted identifier with at least two segments, for
 * example `com.example.echo`. Lowercase only, so two ids never collide on a
 * case-insensitive file system; each segment starts with a letter, so no id is
 * `.`, `..` or a reserved device name, and the id is safe as a folder name.
 */
export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+$/;

export const PluginId = z
  .string()
  .max(LIMITS.maxPluginIdLength, { message: `must be at most ${LIMITS.maxPluginIdLength} characters` })
  .regex(PLUGIN_ID_PATTERN, {
    message: 'must be a lowercase dotted identifier with at least two segments, each starting with a letter (for example com.example.echo)',
  });

/** ISO 8601 timestamp with a time zone. */
export const IsoTimestamp = z.iso.datetime({ offset: true });

export const ConversationType = z.enum(['group', 'c2c', 'channel', 'direct']);
export type ConversationType = z.infer<typeof ConversationType>;

export const Platform = z.enum(['windows', 'linux', 'osx']);
export const Architecture = z.enum(['x64', 'arm64', 'x86']);
