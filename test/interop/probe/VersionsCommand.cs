// `versions`: NuGet.Versioning 8.0.0's answer for each input string, for the differential of catalog-sync's version rules.
// Input: one JSON string a line (so that any character, line breaks included, can be sent). Output: one line per input,
//   {"i":N,"valid":false}  or
//   {"i":N,"valid":true,"normalized":ToNormalizedString(),"full":ToFullString(),"key":normalized.ToLowerInvariant(),
//    "prerelease":bool,"semver2":bool,"metadata":string|null}
// then {"order":[[i,...],...]}: the valid inputs sorted by VersionComparer.Default, inputs that compare equal grouped.
using System.Text;
using System.Text.Json;
using NuGet.Versioning;

namespace CatalogSync.Interop;

internal static class VersionsCommand
{
    public static int Run(Stream input, StreamWriter stdout)
    {
        using var stdin = new StreamReader(input, new UTF8Encoding(false));
        var parsed = new List<(int Index, NuGetVersion Version)>();
        string? line;
        var i = 0;
        while ((line = stdin.ReadLine()) != null)
        {
            if (line.Length == 0) continue;
            var text = JsonSerializer.Deserialize<string>(line) ?? throw new InvalidDataException($"line {i + 1}: null is not a version string");
            if (NuGetVersion.TryParse(text, out var version))
            {
                parsed.Add((i, version));
                var normalized = version.ToNormalizedString();
                Program.WriteLine(stdout, new
                {
                    i, valid = true, normalized, full = version.ToFullString(), key = normalized.ToLowerInvariant(),
                    prerelease = version.IsPrerelease, semver2 = version.IsSemVer2, metadata = version.HasMetadata ? version.Metadata : null,
                });
            }
            else
            {
                Program.WriteLine(stdout, new { i, valid = false });
            }
            i++;
        }
        // OrderBy is a stable sort; runs that compare equal become one group.
        var sorted = parsed.OrderBy(p => p.Version, VersionComparer.Default).ToList();
        var groups = new List<List<int>>();
        for (var k = 0; k < sorted.Count; k++)
        {
            if (k > 0 && VersionComparer.Default.Compare(sorted[k - 1].Version, sorted[k].Version) == 0) groups[^1].Add(sorted[k].Index);
            else groups.Add([sorted[k].Index]);
        }
        Program.WriteLine(stdout, new { order = groups });
        return 0;
    }
}
