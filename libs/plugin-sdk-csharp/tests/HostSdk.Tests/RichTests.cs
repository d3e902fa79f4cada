using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using HostSdk.Http;
using HostSdk.Testing;
using HostSdk.Wire;

namespace HostSdk.Tests;

/// <summary>
/// Image and file parts, keyboards and the event types other than messages (docs/protocol/v2.md 5.4, 5.5, 7.1): the
/// builders and their refusals, the handlers over stdio (the test host) and over HTTP.
/// </summary>
public class RichTests
{
    private static Button[] Row(int n, string prefix) =>
        Enumerable.Range(0, n).Select(i => Buttons.Callback($"{prefix}{i}", $"{prefix}:{i}")).ToArray();

    private static string CodeOf(Action build) => Assert.Throws<MessageException>(build).Code;

    [Fact]
    public void ImageAndFileParts()
    {
        var image = Parts.ImageFromUrl("https://cdn.example.com/cat.png", "a cat");
        Assert.Equal(("https://cdn.example.com/cat.png", "a cat"), (image.Url, image.Alt));
        Assert.Equal("report.pdf", Parts.FileFromUrl("http://files.example.com/r.pdf", "report.pdf").FileName);
    }

    [Theory]
    [InlineData("cat.png")]
    [InlineData("ftp://example.com/cat.png")]
    [InlineData("javascript:alert(1)")]
    [InlineData("https://")]
    [InlineData("https://cdn.example.com/a cat.png")]
    public void AnImageUrlThatIsNotHttpIsRefused(string url)
    {
        Assert.Equal(Catalog.CodeMessagePartUnsupported, CodeOf(() => Parts.ImageFromUrl(url)));
        Assert.Equal(Catalog.CodeMessagePartUnsupported, CodeOf(() => Parts.FileFromUrl(url)));
    }

    [Fact]
    public void AUrlLongerThanTheLimitIsRefused() =>
        Assert.Equal(Catalog.CodeMessagePartUnsupported, CodeOf(() => Parts.ImageFromUrl("https://cdn.example.com/" + new string('a', Catalog.LimitMaxMediaUrlChars))));

    [Fact]
    public void ButtonsOfEachAction()
    {
        var yes = Buttons.Callback("Yes", "vote:yes", id: "yes", primary: true);
        Assert.Equal(("yes", "primary", "callback", "vote:yes"), (yes.Id, yes.Style, yes.Action, yes.Data));
        Assert.Equal("link", Buttons.Link("Docs", "https://example.com/docs").Action);
        var help = Buttons.Command("Help", "/help", send: true);
        Assert.Equal(("command", true), (help.Action, help.Send));
    }

    [Fact]
    public void ButtonsBeyondTheRulesAreInvalid()
    {
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Buttons.Callback(new string('x', Catalog.LimitMaxButtonLabelChars + 1), "d")));
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Buttons.Callback("  ", "d")));
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Buttons.Callback("Yes", "")));
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Buttons.Callback("Yes", new string('d', Catalog.LimitMaxButtonDataChars + 1))));
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Buttons.Callback("Yes", "d", id: "has space")));
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Buttons.Link("Docs", "/docs")));
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Buttons.Link("Docs", "mailto:a@example.com")));
    }

    [Fact]
    public void KeyboardsAreCheckedAgainstTheProtocolsLimits()
    {
        var largest = Enumerable.Range(0, Catalog.LimitMaxKeyboardRows).Select(r => Row(Catalog.LimitMaxKeyboardButtonsPerRow, $"r{r}")).ToArray();
        Assert.Equal(Catalog.LimitMaxKeyboardRows, Keyboard.Of(largest).Rows.Count);
        var tooMany = Enumerable.Range(0, Catalog.LimitMaxKeyboardRows + 1).Select(r => Row(1, $"r{r}")).ToArray();
        Assert.Equal(Catalog.CodeMessageKeyboardTooLarge, CodeOf(() => Keyboard.Of(tooMany)));
        Assert.Equal(Catalog.CodeMessageKeyboardTooLarge, CodeOf(() => Keyboard.Of(Row(Catalog.LimitMaxKeyboardButtonsPerRow + 1, "b"))));
        Assert.Equal(Catalog.CodeMessageKeyboardTooLarge, CodeOf(() => Keyboard.Of()));
        Assert.Equal(Catalog.CodeMessageKeyboardTooLarge, CodeOf(() => Keyboard.Of([])));
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Keyboard.Of([Buttons.Callback("A", "a", id: "same"), Buttons.Callback("B", "b", id: "same")])));
        // The second button's default id is r0c1: an explicit id equal to a default one is a duplicate too.
        Assert.Equal(Catalog.CodeMessageKeyboardInvalid, CodeOf(() => Keyboard.Of([Buttons.Callback("A", "a", id: "r0c1"), Buttons.Callback("B", "b")])));
    }

    private static Plugin RichPlugin() => new PluginBuilder("sample.rich")
        .Command("vote", ctx => ctx.ReplyMarkdownAsync([Text.Of("**Vote**")],
            Keyboard.Of([Buttons.Callback("Yes", "vote:yes", primary: true), Buttons.Callback("No", "vote:no")])))
        .Command("cat", ctx => ctx.ReplyAsync(Text.Of("a cat: "), Parts.ImageFromUrl("https://cdn.example.com/cat.png")))
        .Command("two", ctx => ctx.ReplyAsync(Parts.ImageFromUrl("https://a.example/1.png"), Parts.ImageFromUrl("https://a.example/2.png")))
        .Command("textkb", ctx => ctx.ReplyMarkdownAsync([Parts.ImageFromUrl("https://a.example/1.png")], Keyboard.Of([Buttons.Callback("A", "a")])))
        .OnInteraction(ctx => ctx.Data == "fail"
            ? throw new InvalidOperationException("cannot count votes")
            : ctx.ReplyAsync(Text.Of($"{ctx.Sender!.DisplayName} chose {ctx.Data} with {ctx.Interaction!.ButtonId}")))
        .OnBotAdded(ctx => ctx.ReplyMarkdownAsync([Text.Of("Hello! Pick one:")], Keyboard.Of([Buttons.Callback("Yes", "vote:yes")])))
        .OnBotRemoved(ctx => ctx.ReplyAsync(Text.Of("bye")))
        .Build();

    private static async Task<TestHost> Started(Plugin plugin)
    {
        var host = TestHost.Start(plugin);
        var init = await host.InitializeAsync();
        Assert.False(init.IsError, init.ErrorMessage);
        return host;
    }

    private static async Task<JsonElement> CompletedAsync(TestHost host, string eventId) =>
        (await host.WaitForCallAsync(Catalog.MethodEventsCompleted, c => c.Params.GetProperty("eventId").GetString() == eventId)).Params;

    private static string? ErrorCode(JsonElement completed) =>
        completed.TryGetProperty("error", out var e) && e.ValueKind == JsonValueKind.Object ? e.GetProperty("code").GetString() : null;

    private static JsonElement ReplyOf(TestHost host, string eventId) =>
        host.Calls.Single(c => c.Method == Catalog.MethodMessagesReply && c.Params.GetProperty("eventId").GetString() == eventId).Params.GetProperty("message");

    [Fact]
    public async Task RepliesCarryKeyboardsAndImagesAndRefuseWhatTheHostWould()
    {
        await using var host = await Started(RichPlugin());
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "/vote", "vote"));
        Assert.Null(ErrorCode(await CompletedAsync(host, "e1")));
        var keyboard = ReplyOf(host, "e1").GetProperty("keyboard").GetProperty("rows")[0].GetProperty("buttons");
        Assert.Equal(("r0c0", "primary"), (keyboard[0].GetProperty("id").GetString(), keyboard[0].GetProperty("style").GetString()));
        Assert.Equal(("r0c1", "secondary"), (keyboard[1].GetProperty("id").GetString(), keyboard[1].GetProperty("style").GetString()));

        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e2", "/cat", "cat"));
        await CompletedAsync(host, "e2");
        var image = ReplyOf(host, "e2").GetProperty("parts")[1];
        Assert.Equal(("image", "https://cdn.example.com/cat.png"), (image.GetProperty("type").GetString(), image.GetProperty("url").GetString()));

        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e3", "/two", "two"));
        Assert.Equal(Catalog.CodeMessageMediaTooMany, ErrorCode(await CompletedAsync(host, "e3")));
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e4", "/textkb", "textkb"));
        Assert.Equal(Catalog.CodeMessageKeyboardUnsupportedFormat, ErrorCode(await CompletedAsync(host, "e4")));
    }

    [Fact]
    public async Task OtherEventTypesReachTheirHandlersOverStdio()
    {
        await using var host = await Started(RichPlugin());
        var ack = await host.ClickAsync("i1", "vote:yes", "yes");
        Assert.True(ack.Result!.Value.GetProperty("accepted").GetBoolean());
        Assert.Null(ErrorCode(await CompletedAsync(host, "i1")));
        Assert.Equal("Alice chose vote:yes with yes", ReplyOf(host, "i1").GetProperty("parts")[0].GetProperty("text").GetString());

        await host.ClickAsync("i2", "fail");
        Assert.Equal(Catalog.CodePluginHandlerFailed, ErrorCode(await CompletedAsync(host, "i2")));

        await host.BotAddedAsync("a1");
        await CompletedAsync(host, "a1");
        Assert.Equal("r0c0", ReplyOf(host, "a1").GetProperty("keyboard").GetProperty("rows")[0].GetProperty("buttons")[0].GetProperty("id").GetString());

        await host.BotRemovedAsync("r1");
        Assert.Equal(Catalog.CodeMessageReferenceUnavailable, ErrorCode(await CompletedAsync(host, "r1")));

        // No handler for conversation.opened: declined at once.
        var declined = await host.ConversationOpenedAsync("o1");
        Assert.False(declined.Result!.Value.GetProperty("accepted").GetBoolean());

        var unknown = TestHost.ChatEvent("x1", "bot.added");
        unknown["eventType"] = "guild.member_added";
        Assert.Equal(Catalog.RpcInvalidParams, (await host.RequestAsync(Catalog.MethodEventsDeliver, unknown)).ErrorCode);
    }

    [Fact]
    public async Task AHandlerWithoutItsSubscriptionIsRefusedAtTheHandshake()
    {
        var dir = Directory.CreateTempSubdirectory("hostsdk-rich-").FullName;
        try
        {
            var manifest = HttpEndpointTests.WriteManifest(dir);
            var plugin = new PluginBuilder(HttpEndpointTests.PluginId).Manifest(manifest).OnInteraction(ctx => Task.CompletedTask).Build();
            await using var host = TestHost.Start(plugin);
            var parameters = host.InitializeParams();
            parameters["pluginId"] = HttpEndpointTests.PluginId;
            var init = await host.InitializeAsync(parameters);
            Assert.Equal(Catalog.RpcPluginError, init.ErrorCode);
            Assert.Contains("{\"eventType\": \"interaction.created\"}", init.ErrorMessage);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public async Task OtherEventTypesOverHttp()
    {
        var dir = Directory.CreateTempSubdirectory("hostsdk-rich-http-").FullName;
        try
        {
            var plugin = new PluginBuilder(HttpEndpointTests.PluginId)
                .OnInteraction(ctx => ctx.ReplyMarkdownAsync([Text.Of("you chose "), Text.Literal(ctx.Data)], Keyboard.Of([Buttons.Callback("Again", ctx.Data)])))
                .Build();
            var now = DateTimeOffset.FromUnixTimeSeconds(1767225600);
            await using var endpoint = new HttpPluginEndpoint(plugin, new HttpPluginOptions
            {
                Secrets = HostSecrets.Static(HttpEndpointTests.Secret),
                ManifestPath = HttpEndpointTests.WriteManifest(dir),
                Now = () => now,
                Log = (_, _) => { },
            });
            async Task<HttpAnswer> Post(JsonObject e, string id, bool other = true)
            {
                var body = Encoding.UTF8.GetBytes(e.ToJsonString());
                var h = HttpEndpointTests.Signed(body, now, id);
                Func<string, string?> header = name => h.TryGetValue(name, out var v) ? v : null;
                return other ? await endpoint.PostOtherEventAsync(header, body) : await endpoint.PostEventAsync(header, body);
            }
            var clicked = await Post(TestHost.ChatEvent("h1", "interaction.created", "vote:yes"), "d1");
            Assert.Equal(200, clicked.Status);
            var response = JsonNode.Parse(clicked.Body)!;
            Assert.True((bool)response["accepted"]!);
            Assert.Equal("vote:yes", (string)response["outboundMessages"]![0]!["keyboard"]!["rows"]![0]!["buttons"]![0]!["data"]!);

            var declined = await Post(TestHost.ChatEvent("h2", "bot.added"), "d2");
            Assert.False((bool)JsonNode.Parse(declined.Body)!["accepted"]!);
            Assert.Equal(400, (await Post(TestHost.MessageEvent("h3", "hi"), "d3")).Status);
            Assert.Equal(400, (await Post(TestHost.ChatEvent("h4", "interaction.created", "x"), "d4", other: false)).Status);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
