// A sample protocol v2 plugin: /echo <text> answers in Markdown, mentioning the sender in groups.
using HostSdk;

var plugin = new PluginBuilder("com.example.csharp-echo")
    .Description("echoes /echo <text> back")
    .OnStart(ctx =>
    {
        // In protocol mode Console.Out is stderr, so this line lands in the plugin log, not among the frames.
        Console.WriteLine("echo plugin started");
        return Task.CompletedTask;
    })
    .Command("echo", async ctx =>
    {
        if (ctx.Event.Conversation.Type != "group")
        {
            await ctx.ReplyAsync(Text.Of("you said: "), Text.Literal(ctx.Args));
            return;
        }
        await ctx.ReplyMarkdownAsync(Mention.User(ctx.Sender), Text.Of(" said **"), Text.Literal(ctx.Args), Text.Of("**"));
    })
    .Build();

return await plugin.RunAsync(args);
