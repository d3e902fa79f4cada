// Packs a published plugin: the publish folder plus a manifest whose stdio transport launches
// `dotnet <Assembly>.dll --host-stdio`, as one ZIP with the files at its root. The SDK package's
// buildTransitive targets run it after `dotnet publish`; it can also be run by hand:
//   dotnet HostSdk.Pack.dll --publish-dir <dir> --manifest <manifest.json> --assembly <name> --out <zip>
using HostSdk.Pack;

return PluginPacker.Run(args, Console.Out, Console.Error);
