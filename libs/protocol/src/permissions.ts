import { z } from 'zod';

/**
 * Every permission a v2 plugin can declare, with the reason shown to the
 * operator. A plugin declares only what it uses; the host refuses a
 * plugin-to-host call whose permission is not declared.
 */
export const PERMISSIONS = {
  'messages.reply': 'Reply to the messages the plugin receives.',
  'messages.send': 'Send messages to a group, channel or user on its own initiative.',
  'messages.mentionEveryone': 'Mention everyone in a group (@everyone).',
  'messages.intercept': 'Stop an event from reaching the plugins after this one (answer intercepted: true).',
  'messages.recall': 'Recall (delete) messages the bot sent.',
  'media.upload': 'Upload images and files for messages.',
  'users.read': 'Read user profiles.',
  'groups.read': 'Read group information and member lists.',
  'groups.manage': 'Change group settings.',
  'guilds.read': 'Read guild information.',
  'channels.manage': 'Create, change and delete channels.',
  'members.read': 'Read member details.',
  'permissions.manage': 'Change member roles and permissions.',
} as const;

export type Permission = keyof typeof PERMISSIONS;
export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as [Permission, ...Permission[]];
export const PermissionSchema = z.enum(PERMISSION_NAMES);

/**
 * The `permissions` array of a manifest. Duplicates are refused by the
 * manifest's cross-field check (`manifest.permissions.duplicate`, with the
 * index); the generated JSON Schema adds `uniqueItems` so editors flag them too.
 */
export const PermissionListSchema = z.array(PermissionSchema);
