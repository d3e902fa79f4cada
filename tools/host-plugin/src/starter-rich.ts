import { json, starterManifest, type StarterManifest } from './templates';

/**
 * The picture the starters reply with to `/cat`: a public image (PNG or JPEG, as QQ Bot
 * takes), fetched by the platform when the reply is sent. Authors replace it with their own.
 */
export const STARTER_IMAGE_URL = 'https://upload.wikimedia.org/wikipedia/commons/3/3a/Cat03.jpg';

/**
 * manifest.json of a new project in any of the four languages: the starter's `echo` command, plus `cat` (an image
 * reply) and `vote` (a keyboard of callback buttons), and the `interaction.created` subscription that
 * brings the clicks on those buttons back to the plugin.
 */
export function richStarterManifest(m: StarterManifest): string {
  const manifest = JSON.parse(starterManifest(m)) as {
    eventSubscriptions: { eventType: string }[];
    commands: { name: string; aliases: string[]; prefixes: string[]; description: string; priority: number }[];
  };
  manifest.eventSubscriptions.push({ eventType: 'interaction.created' });
  manifest.commands.push(
    { name: 'cat', aliases: [], prefixes: ['/'], description: 'Replies with a picture of a cat', priority: 0 },
    { name: 'vote', aliases: [], prefixes: ['/'], description: 'Asks a question with buttons to answer it', priority: 0 },
  );
  return json(manifest);
}
