// NuGet's own reading of a feed and of versions, for catalog-sync's interoperability suite (npm run test:interop).
//   dotnet Probe.dll feed URL ID...   JSON lines: which resources NuGet chose, then per id the versions of the flat
//                                     container and of registration, then one line per version (see FeedCommand.cs).
//   dotnet Probe.dll versions         stdin: one JSON string per line; stdout: NuGet.Versioning's answer for each, then
//                                     the order of the valid ones (see VersionsCommand.cs).
// Everything printed is JSON, one value a line, UTF-8 without a BOM; nothing else is written to stdout.
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace CatalogSync.Interop;

public static class Program
{
    internal static readonly JsonSerializerOptions Json = new() { WriteIndented = false, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public static async Task<int> Main(string[] args)
    {
        using var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16) { AutoFlush = false };
        switch (args.FirstOrDefault())
        {
            case "feed" when args.Length >= 3:
                return await FeedCommand.Run(args[1], args.Skip(2).ToArray(), stdout);
            case "versions" when args.Length == 1:
                return VersionsCommand.Run(Console.OpenStandardInput(), stdout);
            default:
                Console.Error.WriteLine("usage: Probe feed SERVICE_INDEX_URL ID... | Probe versions < json-lines");
                return 2;
        }
    }

    internal static void WriteLine(StreamWriter stdout, object value) => stdout.WriteLine(JsonSerializer.Serialize(value, Json));
}
