using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using HostSdk.Testing;
using HostSdk.Wire;
using Microsoft.Extensions.Logging;

namespace HostSdk.Tests;

public class RuntimeTests
{
    private static Plugin Echo(Action<PluginBuilder>? more = null)
    {
        var b = new PluginBuilder("sample.echo")
            .Command("echo", ctx => ctx.ReplyAsync(Mention.User(ctx.Sender), Text.Of(" said: "), Text.Literal(ctx.Args)));
        more?.Invoke(b);
        return b.Build();
    }

    private static async Task<TestHost> Started(Plugin plugin, JsonObject? runtime = null, JsonObject? settings = null)
    {
        var host = TestHost.Start(plugin);
        var init = await host.InitializeAsync(host.InitializeParams(runtime, settings));
        Assert.False(init.IsError, init.ErrorMessage);
        return host;
    }

    private static string? CompletedError(RecordedCall c) =>
        c.Params.TryGetProperty("error", out var e) && e.ValueKind == JsonValueKind.Object ? e.GetProperty("code").GetString() : null;

    [Fact]
    public async Task WithoutTheStdioFlagPrintsHelpAndExits2()
    {
        var stderr = new StringWriter();
        var code = await Echo().RunStdioAsync([], Stream.Null, Stream.Null, stderr);
        Assert.Equal(Plugin.UsageExitCode, code);
        Assert.Contains("--host-stdio", stderr.ToString());
    }

    [Fact]
    public async Task HandshakeAnswersWithThePluginIdAndSdk()
    {
        await using var host = TestHost.Start(Echo());
        var r = await host.InitializeAsync();
        Assert.False(r.IsError);
        var result = r.Result!.Value.Deserialize(WireJsonContext.Default.HostInitializeResult)!;
        Assert.Equal("sample.echo", result.PluginId);
        Assert.Equal(Plugin.SdkName, result.SdkName);
        Assert.Equal(2, result.ProtocolVersion);
        Assert.Contains(Catalog.MethodEventsMessage, result.Capabilities!);
        var again = await host.InitializeAsync();
        Assert.Equal(Catalog.RpcAlreadyInitialized, again.ErrorCode);
    }

    [Fact]
    public async Task RequestsBeforeTheHandshakeAreRefused()
    {
        await using var host = TestHost.Start(Echo());
        var r = await host.RequestAsync(Catalog.MethodPluginPing, new JsonObject());
        Assert.Equal(Catalog.RpcNotInitialized, r.ErrorCode);
    }

    [Fact]
    public async Task AnotherPluginIdIsRefusedAndTheProcessExits1()
    {
        await using var host = TestHost.Start(Echo());
        var p = host.InitializeParams();
        p["pluginId"] = "someone.else";
        var r = await host.InitializeAsync(p);
        Assert.Equal(Catalog.RpcPluginError, r.ErrorCode);
        Assert.Contains("someone.else", r.ErrorMessage);
        Assert.Equal(1, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task AShortTokenIsInvalidParams()
    {
        await using var host = TestHost.Start(Echo());
        var p = host.InitializeParams();
        p["token"] = "short";
        var r = await host.InitializeAsync(p);
        Assert.Equal(Catalog.RpcInvalidParams, r.ErrorCode);
        Assert.Equal("params.field.invalid", r.ErrorData!.Value.GetProperty("issues")[0].GetProperty("code").GetString());
    }

    [Fact]
    public async Task ACommandIsAcknowledgedRepliedWithTypedPartsAndCompleted()
    {
        await using var host = await Started(Echo());
        var ack = await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "/echo <b>hi</b>", "echo", "<b>hi</b>"));
        Assert.True(ack.Result!.Value.GetProperty("accepted").GetBoolean());
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        var p = reply.Params.Deserialize(WireJsonContext.Default.MessagesReplyParams)!;
        Assert.Equal("e1", p.EventId);
        Assert.Equal(TestHost.DefaultToken, p.Token);
        Assert.Equal("text", p.Message.Format);
        Assert.Collection(p.Message.Parts,
            part => Assert.Equal("U-1", Assert.IsType<MessagePartMentionUser>(part).Id),
            part => Assert.Equal(" said: ", Assert.IsType<MessagePartText>(part).Text),
            part => Assert.Equal("<b>hi</b>", Assert.IsType<MessagePartText>(part).Text));
        var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Equal("e1", done.Params.GetProperty("eventId").GetString());
        Assert.Null(CompletedError(done));
    }

    [Fact]
    public async Task TheTestHostRoutesTextToCommandsAsTheHostDoes()
    {
        await using var host = await Started(Echo());
        host.Commands = [new Command { Name = "echo", Aliases = ["say"], Prefixes = ["/", "!"] }];
        await host.SendMessageAsync("e1", "  !SAY   hello there");
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        Assert.Equal("hello there", reply.Params.GetProperty("message").GetProperty("parts")[2].GetProperty("text").GetString());
        var ack = await host.SendMessageAsync("e2", "/echoes");
        Assert.False(ack.Result!.Value.GetProperty("accepted").GetBoolean());
    }

    [Fact]
    public async Task AnEventNoHandlerTakesIsDeclinedAtOnce()
    {
        await using var host = await Started(Echo());
        var ack = await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "hello"));
        Assert.False(ack.Result!.Value.GetProperty("accepted").GetBoolean());
    }

    [Theory]
    [InlineData("eventType", "message.deleted", "eventType")]
    [InlineData("eventId", "", "eventId")]
    public async Task AnEventWithBadValuesIsInvalidParamsWithThePath(string key, string value, string path)
    {
        await using var host = await Started(Echo());
        var e = TestHost.MessageEvent("e1", "/echo", "echo");
        e[key] = value;
        var ack = await host.RequestAsync(Catalog.MethodEventsMessage, e);
        Assert.Equal(Catalog.RpcInvalidParams, ack.ErrorCode);
        var issue = ack.ErrorData!.Value.GetProperty("issues")[0];
        Assert.Equal("event.field.invalid", issue.GetProperty("code").GetString());
        Assert.Equal(path, issue.GetProperty("path").GetString());
    }

    [Fact]
    public async Task AnEventInAnUnknownConversationTypeIsInvalidParams()
    {
        await using var host = await Started(Echo());
        var e = TestHost.MessageEvent("e1", "/echo", "echo");
        e["conversation"]!["type"] = "carrier-pigeon";
        var ack = await host.RequestAsync(Catalog.MethodEventsMessage, e);
        Assert.Equal("conversation.type", ack.ErrorData!.Value.GetProperty("issues")[0].GetProperty("path").GetString());
    }

    [Fact]
    public async Task AnInvalidEventIsInvalidParams()
    {
        await using var host = await Started(Echo());
        var e = TestHost.MessageEvent("e1", "/echo", "echo");
        e.Remove("sender");
        var ack = await host.RequestAsync(Catalog.MethodEventsMessage, e);
        Assert.Equal(Catalog.RpcInvalidParams, ack.ErrorCode);
    }

    [Fact]
    public async Task OverTheLimitsAnEventIsOverloadedAndPingCountsTheRunningHandler()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var plugin = new PluginBuilder("sample.slow").OnMessage(async ctx => await release.Task).Build();
        await using var host = await Started(plugin, new JsonObject { ["maxConcurrentEvents"] = 1, ["queueCapacity"] = 0 });
        Assert.True((await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"))).Result!.Value.GetProperty("accepted").GetBoolean());
        var second = await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e2", "b"));
        Assert.Equal(Catalog.RpcOverloaded, second.ErrorCode);
        Assert.Equal(1, second.ErrorData!.Value.GetProperty("maxConcurrentEvents").GetInt32());
        var ping = await host.RequestAsync(Catalog.MethodPluginPing, new JsonObject { ["nonce"] = "n-1" });
        Assert.Equal("n-1", ping.Result!.Value.GetProperty("nonce").GetString());
        Assert.Equal(1, ping.Result!.Value.GetProperty("inFlightEvents").GetInt64());
        release.SetResult();
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        var third = await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e3", "c"));
        Assert.False(third.IsError);
    }

    [Fact]
    public async Task EventsCancelCancelsTheHandlersToken()
    {
        var plugin = new PluginBuilder("sample.wait").OnMessage(ctx => Task.Delay(Timeout.Infinite, ctx.CancellationToken)).Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var r = await host.RequestAsync(Catalog.MethodEventsCancel, new JsonObject { ["eventId"] = "e1", ["reason"] = "deadline" });
        Assert.True(r.Result!.Value.GetProperty("cancelled").GetBoolean());
        var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Equal(Catalog.ErrSdkEventCancelled, CompletedError(done));
        var unknown = await host.RequestAsync(Catalog.MethodEventsCancel, new JsonObject { ["eventId"] = "nope", ["reason"] = "deadline" });
        Assert.False(unknown.Result!.Value.GetProperty("cancelled").GetBoolean());
        var bad = await host.RequestAsync(Catalog.MethodEventsCancel, new JsonObject { ["eventId"] = "e1", ["reason"] = "bored" });
        Assert.Equal(Catalog.RpcInvalidParams, bad.ErrorCode);
    }

    [Fact]
    public async Task TheHandlerDeadlineCancelsTheToken()
    {
        var plugin = new PluginBuilder("sample.wait").OnMessage(ctx => Task.Delay(Timeout.Infinite, ctx.CancellationToken)).Build();
        await using var host = await Started(plugin, new JsonObject { ["handlerDeadlineMilliseconds"] = 50 });
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Equal(Catalog.ErrSdkEventCancelled, CompletedError(done));
    }

    [Fact]
    public async Task AFailingHandlerIsReportedInTheCompletion()
    {
        var plugin = new PluginBuilder("sample.fail")
            .Command("boom", _ => throw new InvalidOperationException("kaput"))
            .Command("mine", _ => throw new HandlerException("sample.own_code", "my own failure"))
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "/boom", "boom"));
        var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted, c => c.Params.GetProperty("eventId").GetString() == "e1");
        Assert.Equal(Catalog.CodePluginHandlerFailed, CompletedError(done));
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e2", "/mine", "mine"));
        var mine = await host.WaitForCallAsync(Catalog.MethodEventsCompleted, c => c.Params.GetProperty("eventId").GetString() == "e2");
        Assert.Equal("sample.own_code", CompletedError(mine));
        var log = await host.WaitForCallAsync(Catalog.MethodLogWrite);
        Assert.Equal("error", log.Params.GetProperty("level").GetString());
    }

    [Fact]
    public async Task PluginStopCancelsHandlersLetsThemFinishRunsOnStopAndExits0()
    {
        var stopped = false;
        var plugin = new PluginBuilder("sample.stop")
            .OnMessage(async ctx =>
            {
                try { await Task.Delay(Timeout.Infinite, ctx.CancellationToken); }
                catch (OperationCanceledException) { await ctx.ReplyAsync(Text.Of("bye")); }
            })
            .OnStop(_ => { stopped = true; return Task.CompletedTask; })
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var stop = await host.RequestAsync(Catalog.MethodPluginStop, new JsonObject { ["reason"] = "operator" });
        Assert.True(stop.Result!.Value.GetProperty("accepted").GetBoolean());
        Assert.Equal(0, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.True(stopped);
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        Assert.Equal("bye", reply.Params.GetProperty("message").GetProperty("parts")[0].GetProperty("text").GetString());
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
    }

    [Fact]
    public async Task EventsAfterStopAreRefusedAsStopping()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var plugin = new PluginBuilder("sample.stop").OnMessage(_ => release.Task).Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        await host.RequestAsync(Catalog.MethodPluginStop, new JsonObject());
        var late = await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e2", "b"));
        Assert.Equal(Catalog.RpcStopping, late.ErrorCode);
        release.SetResult();
        Assert.Equal(0, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public async Task TheEndOfStdinEndsTheRuntimeWith0()
    {
        var host = await Started(Echo());
        host.CloseInput();
        Assert.Equal(0, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
        await host.DisposeAsync();
    }

    [Theory]
    [InlineData("Content-Length: x\r\n\r\n{}", "framing.content_length.invalid")]
    [InlineData("X-Other: 1\r\nContent-Length: 2\r\n\r\n{}", "framing.header.unknown")]
    [InlineData("Content-Length: 5\r\n\r\nnope!", "framing.json.invalid")]
    [InlineData("Content-Length: 99999999\r\n\r\n", "framing.payload.too_large")]
    public async Task ABrokenStreamEndsTheRuntimeWith1AndItsCode(string raw, string code)
    {
        await using var host = TestHost.Start(Echo());
        await host.WriteRawAsync(Encoding.UTF8.GetBytes(raw));
        Assert.Equal(1, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Contains(code, host.Stderr);
    }

    [Fact]
    public async Task AnEveryoneMentionInTextIsRefusedLocallyAndGoesOutInMarkdown()
    {
        string? refused = null;
        var plugin = new PluginBuilder("sample.all")
            .Command("all", async ctx =>
            {
                try { await ctx.ReplyAsync(Mention.Everyone(), Text.Of(" hi")); }
                catch (MessageException e) { refused = e.Code; }
                await ctx.ReplyMarkdownAsync(Mention.Everyone(), Text.Of(" hi"));
            })
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "/all", "all"));
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Equal(Catalog.CodeMessageMentionUnsupportedFormat, refused);
        var reply = Assert.Single(host.Calls, c => c.Method == Catalog.MethodMessagesReply);
        Assert.Equal("markdown", reply.Params.GetProperty("message").GetProperty("format").GetString());
    }

    [Fact]
    public async Task AMessageTheHostRefusesIsAMessageExceptionWithItsCode()
    {
        MessageException? refused = null;
        var plugin = new PluginBuilder("sample.refused")
            .OnMessage(async ctx =>
            {
                try { await ctx.ReplyAsync(Text.Of("x")); }
                catch (MessageException e) { refused = e; }
            })
            .Build();
        await using var host = await Started(plugin);
        host.Answer = c => c.Method == Catalog.MethodMessagesReply
            ? new HostAnswer(null, Catalog.RpcMessageRejected, "too long", new JsonObject { ["code"] = Catalog.CodeMessageTooLong })
            : null;
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.NotNull(refused);
        Assert.Equal(Catalog.CodeMessageTooLong, refused!.Code);
        Assert.True(refused.FromHost);
    }

    [Fact]
    public async Task AnEmptyMessageIsRefusedLocally()
    {
        string? code = null;
        var plugin = new PluginBuilder("sample.empty")
            .OnMessage(async ctx =>
            {
                try { await ctx.ReplyAsync(Text.Of("  ")); }
                catch (MessageException e) { code = e.Code; }
            })
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Equal(Catalog.CodeMessageEmpty, code);
        Assert.DoesNotContain(host.Calls, c => c.Method == Catalog.MethodMessagesReply);
    }

    [Fact]
    public async Task SettingsDirectoriesAndSendsReachTheHandler()
    {
        var plugin = new PluginBuilder("sample.settings")
            .OnMessage(async ctx =>
            {
                ctx.Log.Info("greeting " + ctx.Settings.GetString("greeting"));
                await ctx.SendAsync(new Target { Type = "group", Id = "G-2" }, Text.Of(ctx.Settings.GetString("greeting") + " " + Path.GetFileName(ctx.Directories.PluginDataDirectory)));
            })
            .Build();
        await using var host = await Started(plugin, settings: new JsonObject { ["greeting"] = "hello" });
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var send = await host.WaitForCallAsync(Catalog.MethodMessagesSend);
        Assert.Equal("G-2", send.Params.GetProperty("target").GetProperty("id").GetString());
        Assert.Equal("hello data", send.Params.GetProperty("message").GetProperty("parts")[0].GetProperty("text").GetString());
        var log = await host.WaitForCallAsync(Catalog.MethodLogWrite);
        Assert.Equal("greeting hello", log.Params.GetProperty("message").GetString());
        var changed = await host.RequestAsync(Catalog.MethodSettingsChanged, new JsonObject { ["settings"] = new JsonObject { ["greeting"] = "hi" } });
        Assert.True(changed.Result!.Value.GetProperty("applied").GetBoolean());
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e2", "b"));
        await host.WaitForCallAsync(Catalog.MethodMessagesSend, c => c.Params.GetProperty("message").GetProperty("parts")[0].GetProperty("text").GetString() == "hi data");
    }

    [Fact]
    public async Task SendsFromAHandlerSpeakAsTheEventsBotUnlessTheTargetNamesOne()
    {
        var plugin = new PluginBuilder("sample.bots")
            .OnMessage(async ctx =>
            {
                await ctx.SendAsync(new Target { Type = "group", Id = "G-2" }, Text.Of("a"));
                await ctx.SendAsync(new Target { Type = "group", Id = "G-3", BotAccountId = "other-bot" }, Text.Of("b"));
            })
            .Build();
        await using var host = await Started(plugin);
        var e = TestHost.MessageEvent("e1", "a");
        await host.RequestAsync(Catalog.MethodEventsMessage, e);
        var first = await host.WaitForCallAsync(Catalog.MethodMessagesSend, c => c.Params.GetProperty("target").GetProperty("id").GetString() == "G-2");
        var second = await host.WaitForCallAsync(Catalog.MethodMessagesSend, c => c.Params.GetProperty("target").GetProperty("id").GetString() == "G-3");
        Assert.Equal(e["bot"]!["botAccountId"]!.GetValue<string>(), first.Params.GetProperty("target").GetProperty("botAccountId").GetString());
        Assert.Equal("other-bot", second.Params.GetProperty("target").GetProperty("botAccountId").GetString());
    }

    [Fact]
    public async Task SendsFromAHandlerNameItsEventAndOnesOutsideAHandlerDoNot()
    {
        var plugin = new PluginBuilder("sample.events")
            .OnStart(ctx => ctx.SendAsync(new Target { Type = "group", Id = "G-start" }, Text.Of("from OnStart")))
            .OnMessage(ctx => ctx.SendAsync(new Target { Type = "group", Id = "G-2" }, Text.Of("from a handler")))
            .Build();
        await using var host = await Started(plugin);
        var outside = await host.WaitForCallAsync(Catalog.MethodMessagesSend, c => c.Params.GetProperty("target").GetProperty("id").GetString() == "G-start");
        Assert.False(outside.Params.TryGetProperty("eventId", out _));
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e7", "a"));
        var inside = await host.WaitForCallAsync(Catalog.MethodMessagesSend, c => c.Params.GetProperty("target").GetProperty("id").GetString() == "G-2");
        Assert.Equal("e7", inside.Params.GetProperty("eventId").GetString());
    }

    [Fact]
    public async Task AnUnknownMethodIsMethodNotFound()
    {
        await using var host = await Started(Echo());
        var r = await host.RequestAsync("plugin.dance", new JsonObject());
        Assert.Equal(Catalog.RpcMethodNotFound, r.ErrorCode);
    }

    [Fact]
    public async Task EventsWaitForOnStartAndThenRun()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var plugin = new PluginBuilder("sample.start")
            .OnStart(_ => release.Task)
            .OnMessage(ctx => ctx.ReplyAsync(Text.Of("late")))
            .Build();
        await using var host = await Started(plugin);
        var pending = host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var ping = await host.RequestAsync(Catalog.MethodPluginPing, new JsonObject());
        Assert.Equal(1, ping.Result!.Value.GetProperty("queuedEvents").GetInt64());
        Assert.Equal(0, ping.Result!.Value.GetProperty("inFlightEvents").GetInt64());
        release.SetResult();
        Assert.True((await pending).Result!.Value.GetProperty("accepted").GetBoolean());
        await host.WaitForCallAsync(Catalog.MethodMessagesReply);
    }

    [Fact]
    public async Task AFailingOnStartStopsThePluginWith1()
    {
        var plugin = new PluginBuilder("sample.start").OnStart(_ => throw new InvalidOperationException("no database")).Build();
        await using var host = await Started(plugin);
        Assert.Equal(1, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
        var log = await host.WaitForCallAsync(Catalog.MethodLogWrite);
        Assert.Contains("no database", log.Params.GetProperty("message").GetString());
    }

    [Fact]
    public async Task AFailingOnSettingsChangedKeepsTheOldSettings()
    {
        string? seen = null;
        var plugin = new PluginBuilder("sample.settings")
            .OnSettingsChanged(ctx => ctx.Settings.GetString("mode") == "bad" ? throw new ArgumentException("mode bad is not allowed") : Task.CompletedTask)
            .OnMessage(ctx => { seen = ctx.Settings.GetString("mode"); return Task.CompletedTask; })
            .Build();
        await using var host = await Started(plugin, settings: new JsonObject { ["mode"] = "good" });
        var r = await host.RequestAsync(Catalog.MethodSettingsChanged, new JsonObject { ["settings"] = new JsonObject { ["mode"] = "bad" } });
        Assert.Equal(Catalog.RpcPluginError, r.ErrorCode);
        Assert.Contains("mode bad is not allowed", r.ErrorMessage);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Equal("good", seen);
    }

    [Fact]
    public async Task ADuplicateEventIdIsRefused()
    {
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var plugin = new PluginBuilder("sample.dup").OnMessage(_ => release.Task).Build();
        await using var host = await Started(plugin, new JsonObject { ["maxConcurrentEvents"] = 2 });
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var again = await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        Assert.Equal(Catalog.RpcInvalidParams, again.ErrorCode);
        release.SetResult();
    }

    [Fact]
    public void ABuilderRefusesTwoHandlersForOneCommand()
    {
        var e = Assert.Throws<ArgumentException>(() => new PluginBuilder("x.y").Command("a", _ => Task.CompletedTask).Command("a", _ => Task.CompletedTask));
        Assert.Contains(Catalog.ErrSdkDefinitionInvalid, e.Message);
    }

    [Fact]
    public async Task AHandlerIgnoringStopIsLeftBehindAfterTheGracePeriod()
    {
        var plugin = new PluginBuilder("sample.stubborn").OnMessage(_ => Task.Delay(Timeout.Infinite)).Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var stop = await host.RequestAsync(Catalog.MethodPluginStop, new JsonObject { ["reason"] = "operator", ["graceMilliseconds"] = 50 });
        Assert.False(stop.IsError);
        Assert.Equal(0, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Contains("grace period", host.Stderr);
    }

    [Fact]
    public async Task InvalidStopParamsAreRefused()
    {
        await using var host = await Started(Echo());
        var r = await host.RequestAsync(Catalog.MethodPluginStop, new JsonObject { ["graceMilliseconds"] = "soon" });
        Assert.Equal(Catalog.RpcInvalidParams, r.ErrorCode);
    }

    [Fact]
    public async Task TheLoggerIsAnILoggerWhoseTemplateValuesBecomeFields()
    {
        var plugin = new PluginBuilder("sample.log")
            .OnMessage(ctx =>
            {
                ctx.Log.LogWarning(new InvalidOperationException("disk full"), "saw {User} in {Count} groups", ctx.Sender.DisplayName, 3);
                return Task.CompletedTask;
            })
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var log = await host.WaitForCallAsync(Catalog.MethodLogWrite);
        Assert.Equal("warn", log.Params.GetProperty("level").GetString());
        Assert.Equal("saw Alice in 3 groups (InvalidOperationException: disk full)", log.Params.GetProperty("message").GetString());
        Assert.Equal("Alice", log.Params.GetProperty("fields").GetProperty("User").GetString());
        Assert.Equal("3", log.Params.GetProperty("fields").GetProperty("Count").GetString());
    }

    [Fact]
    public async Task AHandlersLoggerNamesItsEventAndThePluginsOwnLoggerNone()
    {
        var plugin = new PluginBuilder("sample.log")
            .OnStart(ctx =>
            {
                ctx.Log.Info("ready");
                return Task.CompletedTask;
            })
            .OnMessage(ctx =>
            {
                ctx.Log.LogInformation("answered {Text}", ctx.Text);
                return Task.CompletedTask;
            })
            .Build();
        await using var host = await Started(plugin);
        var ready = await host.WaitForCallAsync(Catalog.MethodLogWrite, c => c.Params.GetProperty("message").GetString() == "ready");
        Assert.False(ready.Params.TryGetProperty("eventId", out _));
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e7", "hi"));
        var answered = await host.WaitForCallAsync(Catalog.MethodLogWrite, c => c.Params.GetProperty("message").GetString() == "answered hi");
        Assert.Equal("e7", answered.Params.GetProperty("eventId").GetString());
    }

    [Fact]
    public async Task TextIsTheMessagesContentAndArgsTheTextAfterTheCommand()
    {
        var seen = new List<(string EventId, string Text, string Args, string? Command)>();
        var plugin = new PluginBuilder("sample.words")
            .Command("echo", ctx =>
            {
                lock (seen) seen.Add((ctx.Event.EventId, ctx.Text, ctx.Args, ctx.Command?.Name));
                return Task.CompletedTask;
            })
            .OnMessage(ctx =>
            {
                lock (seen) seen.Add((ctx.Event.EventId, ctx.Text, ctx.Args, ctx.Command?.Name));
                return Task.CompletedTask;
            })
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "/echo  hi there", "echo", "hi there"));
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted, c => c.Params.GetProperty("eventId").GetString() == "e1");
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e2", "just words"));
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted, c => c.Params.GetProperty("eventId").GetString() == "e2");
        lock (seen)
            Assert.Equal([("e1", "/echo  hi there", "hi there", (string?)"echo"), ("e2", "just words", "", null)], seen);
    }
}
