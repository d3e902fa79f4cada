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
        // "/echo hello" -> a Markdown reply that mentions the sender (groups only; one-to-one chats get
        // plain text). Text.Literal shows the user's text as written: Markdown in it is escaped, not posted.
        var text = ctx.Args.Length > 0 ? ctx.Args : "nothing";
        if (ctx.Event.Conversation.Type == "group")
            await ctx.ReplyMarkdownAsync(Mention.User(ctx.Sender), Text.Of(" said: **"), Text.Literal(text), Text.Of("**"));
        else
            await ctx.ReplyAsync(Text.Of("You said: "), Text.Of(text));
    })
    .Build();

return await plugin.RunAsync(args);
