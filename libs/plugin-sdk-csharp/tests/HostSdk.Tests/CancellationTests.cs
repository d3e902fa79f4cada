using System.Text.Json;
using System.Text.Json.Nodes;
using HostSdk.Testing;
using HostSdk.Wire;

namespace HostSdk.Tests;

/// <summary>
/// The CancellationToken of ReplyAsync, ReplyMarkdownAsync, SendAsync and SendMarkdownAsync, linked with the handler's own:
/// cancelling either while the host has not answered aborts the call with OperationCanceledException.
/// </summary>
public sealed class CancellationTests
{
    private static readonly Target Group = new() { Type = "group", Id = "G-2" };

    /// <summary>
    /// A test host that holds its answer to <paramref name="method"/> until <see cref="Held.Release"/>: the call is
    /// pending in the plugin meanwhile.
    /// </summary>
    private sealed class Held : IDisposable
    {
        private readonly ManualResetEventSlim _release = new();
        public TaskCompletionSource Arrived { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Held(TestHost host, string method) =>
            host.Answer = call =>
            {
                if (call.Method != method) return null;
                Arrived.TrySetResult();
                // A bound so a broken test cannot hang the run; the tests release it themselves.
                _release.Wait(TimeSpan.FromSeconds(30));
                return null;
            };

        public void Release() => _release.Set();

        public void Dispose()
        {
            _release.Set();
            _release.Dispose();
        }
    }

    private static async Task<TestHost> Started(Plugin plugin)
    {
        var host = TestHost.Start(plugin);
        var init = await host.InitializeAsync();
        Assert.False(init.IsError, init.ErrorMessage);
        return host;
    }

    private static string? CompletedError(RecordedCall c) =>
        c.Params.TryGetProperty("error", out var e) && e.ValueKind == JsonValueKind.Object ? e.GetProperty("code").GetString() : null;

    /// <summary>Runs <paramref name="call"/> in a message handler while the host holds <paramref name="method"/>, cancels the caller's token once the call is pending, and returns what the call threw.</summary>
    private static async Task<Exception?> CancelPending(string method, Func<MessageContext, CancellationToken, Task> call)
    {
        var outcome = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        Held? held = null;
        var plugin = new PluginBuilder("sample.cancel")
            .OnMessage(async ctx =>
            {
                using var cts = new CancellationTokenSource();
                var pending = call(ctx, cts.Token);
                await held!.Arrived.Task;
                cts.Cancel();
                try
                {
                    await pending;
                    outcome.SetResult(null);
                }
                catch (Exception e)
                {
                    outcome.SetResult(e);
                }
            })
            .Build();
        await using var host = await Started(plugin);
        using (held = new Held(host, method))
        {
            await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
            var thrown = await outcome.Task.WaitAsync(TimeSpan.FromSeconds(20));
            held.Release();
            var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
            Assert.Null(CompletedError(done));
            return thrown;
        }
    }

    [Fact]
    public async Task CancellingTheTokenOfReplyAsyncAbortsThePendingReply()
    {
        var thrown = await CancelPending(Catalog.MethodMessagesReply, (ctx, ct) => ctx.ReplyAsync([Text.Of("hi")], ct));
        Assert.IsAssignableFrom<OperationCanceledException>(thrown);
    }

    [Fact]
    public async Task CancellingTheTokenOfReplyMarkdownAsyncAbortsThePendingReply()
    {
        var thrown = await CancelPending(Catalog.MethodMessagesReply, (ctx, ct) => ctx.ReplyMarkdownAsync([Text.Of("**hi**")], ct));
        Assert.IsAssignableFrom<OperationCanceledException>(thrown);
    }

    [Fact]
    public async Task CancellingTheTokenOfSendAsyncAbortsThePendingSend()
    {
        var thrown = await CancelPending(Catalog.MethodMessagesSend, (ctx, ct) => ctx.SendAsync(Group, [Text.Of("hi")], ct));
        Assert.IsAssignableFrom<OperationCanceledException>(thrown);
    }

    [Fact]
    public async Task CancellingTheTokenOfSendMarkdownAsyncAbortsThePendingSend()
    {
        var thrown = await CancelPending(Catalog.MethodMessagesSend, (ctx, ct) => ctx.SendMarkdownAsync(Group, [Text.Of("hi")], ct));
        Assert.IsAssignableFrom<OperationCanceledException>(thrown);
    }

    [Fact]
    public async Task EventsCancelAbortsAReplyThatIsPending()
    {
        var outcome = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        var plugin = new PluginBuilder("sample.cancel")
            .OnMessage(async ctx =>
            {
                try
                {
                    await ctx.ReplyAsync(Text.Of("slow"));
                    outcome.SetResult(null);
                }
                catch (Exception e)
                {
                    outcome.SetResult(e);
                    throw;
                }
            })
            .Build();
        await using var host = await Started(plugin);
        using var held = new Held(host, Catalog.MethodMessagesReply);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        await held.Arrived.Task.WaitAsync(TimeSpan.FromSeconds(20));
        // The test host answers nothing while it holds the reply, so the answer to events.cancel is awaited after the release.
        var cancel = host.RequestAsync(Catalog.MethodEventsCancel, new JsonObject { ["eventId"] = "e1", ["reason"] = "deadline" });
        var thrown = await outcome.Task.WaitAsync(TimeSpan.FromSeconds(20));
        held.Release();
        Assert.IsAssignableFrom<OperationCanceledException>(thrown);
        Assert.True((await cancel).Result!.Value.GetProperty("cancelled").GetBoolean());
        var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Equal(Catalog.ErrSdkEventCancelled, CompletedError(done));
    }

    [Fact]
    public async Task ATokenCancelledBeforeTheCallSendsNothing()
    {
        var outcome = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        var plugin = new PluginBuilder("sample.cancel")
            .OnMessage(async ctx =>
            {
                try
                {
                    await ctx.ReplyAsync([Text.Of("never")], new CancellationToken(true));
                    outcome.SetResult(null);
                }
                catch (Exception e)
                {
                    outcome.SetResult(e);
                }
            })
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Null(CompletedError(done));
        Assert.IsAssignableFrom<OperationCanceledException>(await outcome.Task);
        // The plugin writes its frames in order: a reply would have reached the host before the completion.
        Assert.DoesNotContain(host.Calls, c => c.Method == Catalog.MethodMessagesReply);
    }

    [Fact]
    public async Task AnUncancelledTokenLetsTheReplyThrough()
    {
        var plugin = new PluginBuilder("sample.cancel")
            .OnMessage(async ctx =>
            {
                using var cts = new CancellationTokenSource();
                await ctx.ReplyAsync([Text.Of("hi")], cts.Token);
                await ctx.SendAsync(Group, [Text.Of("there")], cts.Token);
            })
            .Build();
        await using var host = await Started(plugin);
        await host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent("e1", "a"));
        var done = await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        Assert.Null(CompletedError(done));
        Assert.Contains(host.Calls, c => c.Method == Catalog.MethodMessagesReply);
        Assert.Contains(host.Calls, c => c.Method == Catalog.MethodMessagesSend);
    }
}
