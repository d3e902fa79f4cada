"""Echo: the sample plugin of the Python SDK."""

from host_sdk_v2 import Plugin, at, literal

plugin = Plugin.from_manifest("manifest.json")


@plugin.command("echo")
def echo(ctx):
    # "/echo hello" -> a Markdown reply that mentions the sender (groups only;
    # one-to-one chats get plain text). literal() shows the user's text as
    # written: Markdown in it (a link, an image) is escaped, not posted.
    text = ctx.args or "nothing"
    if ctx.event["conversation"]["type"] == "group":
        ctx.reply_markdown(at.user(ctx.sender), " said: **", literal(text), "**")
    else:
        ctx.reply("You said: ", text)


if __name__ == "__main__":
    plugin.run()
