// The C# SDK side of the stdio benchmark: the same exchange as raw-child.mjs (the ACK, a Markdown reply
// mentioning the sender with the args, events.completed once the reply was answered), with HostSdk.
using HostSdk;

var plugin = new PluginBuilder("com.example.bench")
    .Command("echo", ctx => ctx.ReplyMarkdownAsync(Mention.User(ctx.Sender), Text.Of(" " + ctx.Args)))
    .Build();
return await plugin.RunAsync(args);
