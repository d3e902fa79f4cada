using HostSdk.Http;
using HostSdk.Wire;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace HostSdk.AspNetCore;

/// <summary>Maps a plugin's HTTP transport onto ASP.NET Core endpoints.</summary>
public static class HostPluginEndpoints
{
    /// <summary>
    /// Serves <paramref name="plugin"/> under <paramref name="basePath"/> (the base URL's path, "" for the root):
    /// GET/HEAD {basePath}/host/plugin/manifest and POST {basePath}/host/plugin/events/message, signed by the host
    /// (docs/protocol/http-signing.md; a bad signature is 401). The plugin stops (OnStop) when the application does.
    /// </summary>
    public static HttpPluginEndpoint MapHostPlugin(this IEndpointRouteBuilder app, Plugin plugin, HttpPluginOptions options, string basePath = "")
    {
        var endpoint = new HttpPluginEndpoint(plugin, options);
        var lifetime = app.ServiceProvider.GetService<IHostApplicationLifetime>();
        lifetime?.ApplicationStopping.Register(() => endpoint.DisposeAsync().AsTask().GetAwaiter().GetResult());
        var prefix = basePath.TrimEnd('/');
        if (prefix.Length > 0 && !prefix.StartsWith('/')) prefix = "/" + prefix;

        app.Map(prefix + Catalog.HttpPathManifest, async context =>
        {
            var request = context.Request;
            if (!HttpMethods.IsGet(request.Method) && !HttpMethods.IsHead(request.Method))
            {
                await WriteAsync(context, HttpPluginEndpoint.MethodNotAllowed(Catalog.HttpPathManifest, "GET, HEAD")).ConfigureAwait(false);
                return;
            }
            await WriteAsync(context, endpoint.GetManifest(name => Header(request, name))).ConfigureAwait(false);
        });
        app.Map(prefix + Catalog.HttpPathMessageEvents, async context =>
        {
            var request = context.Request;
            if (!HttpMethods.IsPost(request.Method))
            {
                await WriteAsync(context, HttpPluginEndpoint.MethodNotAllowed(Catalog.HttpPathMessageEvents, "POST")).ConfigureAwait(false);
                return;
            }
            var body = await ReadBoundedAsync(request, endpoint.MaxBodyBytes, context.RequestAborted).ConfigureAwait(false);
            var answer = body is null
                ? endpoint.BodyTooLarge()
                : await endpoint.PostEventAsync(name => Header(request, name), body, context.RequestAborted).ConfigureAwait(false);
            await WriteAsync(context, answer).ConfigureAwait(false);
        });
        app.Map(prefix + Catalog.HttpPathOtherEvents, async context =>
        {
            var request = context.Request;
            if (!HttpMethods.IsPost(request.Method))
            {
                await WriteAsync(context, HttpPluginEndpoint.MethodNotAllowed(Catalog.HttpPathOtherEvents, "POST")).ConfigureAwait(false);
                return;
            }
            var body = await ReadBoundedAsync(request, endpoint.MaxBodyBytes, context.RequestAborted).ConfigureAwait(false);
            var answer = body is null
                ? endpoint.BodyTooLarge()
                : await endpoint.PostOtherEventAsync(name => Header(request, name), body, context.RequestAborted).ConfigureAwait(false);
            await WriteAsync(context, answer).ConfigureAwait(false);
        });
        return endpoint;
    }

    private static string? Header(HttpRequest request, string name) =>
        request.Headers.TryGetValue(name, out var values) && values.Count > 0 ? values.ToString() : null;

    /// <summary>The body as received, or null when it is larger than <paramref name="max"/> (read no further than that).</summary>
    private static async Task<byte[]?> ReadBoundedAsync(HttpRequest request, long max, CancellationToken cancellationToken)
    {
        if (request.ContentLength is long declared && declared > max) return null;
        var buffer = new MemoryStream();
        var chunk = new byte[16 * 1024];
        while (true)
        {
            var n = await request.Body.ReadAsync(chunk, cancellationToken).ConfigureAwait(false);
            if (n == 0) return buffer.ToArray();
            if (buffer.Length + n > max) return null;
            buffer.Write(chunk, 0, n);
        }
    }

    private static async Task WriteAsync(HttpContext context, HttpAnswer answer)
    {
        var response = context.Response;
        response.StatusCode = answer.Status;
        response.ContentType = HttpAnswer.ContentType;
        response.Headers.CacheControl = "no-store";
        foreach (var (name, value) in answer.Headers) response.Headers[name] = value;
        response.ContentLength = answer.Body.Length;
        if (!HttpMethods.IsHead(context.Request.Method)) await response.Body.WriteAsync(answer.Body, context.RequestAborted).ConfigureAwait(false);
    }
}

/// <summary>Runs a plugin as a small HTTP service from the command line.</summary>
public static class HostPluginHttpHost
{
    /// <summary>
    /// <c>--http &lt;host:port&gt;</c> (port 0 picks a free one) <c>[--secret-file &lt;path&gt;]</c> (default
    /// signing-secret.txt, read again when it changes) <c>[--base-path /prefix]</c>: serves the plugin, prints
    /// "listening http://host:port" on stdout once it listens, and runs until the process is stopped. Returns the exit
    /// code for Main (2 for a bad command line). <paramref name="onListening"/> also gets each address;
    /// <paramref name="cancellationToken"/> stops the service as Ctrl+C does.
    /// </summary>
    public static async Task<int> RunAsync(Plugin plugin, string[] args, HttpPluginOptions? options = null, Action<string>? onListening = null,
        CancellationToken cancellationToken = default)
    {
        string? address = null, secretFile = null, basePath = null;
        for (var i = 0; i < args.Length; i++)
        {
            var value = i + 1 < args.Length ? args[i + 1] : null;
            switch (args[i])
            {
                case "--http" when value != null: address = value; i++; break;
                case "--secret-file" when value != null: secretFile = value; i++; break;
                case "--base-path" when value != null: basePath = value; i++; break;
                default:
                    Console.Error.WriteLine($"unknown or incomplete argument {args[i]}");
                    Console.Error.WriteLine("usage: --http <host:port> [--secret-file <path>] [--base-path /prefix]");
                    return 2;
            }
        }
        if (address is null)
        {
            Console.Error.WriteLine("usage: --http <host:port> [--secret-file <path>] [--base-path /prefix]");
            return 2;
        }
        options ??= new HttpPluginOptions();
        options.Secrets ??= HostSecrets.FromFile(secretFile ?? "signing-secret.txt");

        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://{address}");
        await using var app = builder.Build();
        app.MapHostPlugin(plugin, options, basePath ?? "");
        await app.StartAsync().ConfigureAwait(false);
        var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()?.Addresses ?? [];
        foreach (var url in addresses)
        {
            Console.Out.WriteLine($"listening {url}");
            onListening?.Invoke(url);
        }
        Console.Out.Flush();
        await app.WaitForShutdownAsync(cancellationToken).ConfigureAwait(false);
        await app.StopAsync(CancellationToken.None).ConfigureAwait(false);
        return 0;
    }
}
