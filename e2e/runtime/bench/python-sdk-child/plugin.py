"""The plugin of the Python benchmark: echo with the SDK, as an author would write it."""

import sys

from host_sdk_v2 import Plugin

plugin = Plugin.from_manifest("manifest.json")

if "--async" in sys.argv:

    @plugin.command("echo")
    async def echo_async(ctx):
        await ctx.reply(ctx.args)

else:

    @plugin.command("echo")
    def echo(ctx):
        ctx.reply(ctx.args)


if __name__ == "__main__":
    plugin.run()
