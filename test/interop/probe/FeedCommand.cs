// `feed URL ID...`: a V3 feed as NuGet.Protocol 8.0.0 reads it (what restore, `dotnet list package` and tools see).
//   {"kind":"resources",...}            the resource classes NuGet chose for the service index at URL (null: none);
//   {"kind":"vulnerabilityError",...}   a VulnerabilityInfo problem NuGet reported (restore's NU1900);
//   {"kind":"id","id","flat":[...],"registration":[...]}   per id, the normalized versions of each resource;
//   {"kind":"version",...}              per version of the union: listed, deprecation and vulnerabilities
//       (PackageMetadataResource), audit data (IVulnerabilityInfoResource entries whose range holds the version), and
//       the .nupkg downloaded through FindPackageByIdResource: size, SHA512 (base64) and its nuspec as
//       PackageArchiveReader reads it; a download or read that fails is reported, not thrown.
// Run it with a fresh NUGET_HTTP_CACHE_PATH: NuGet keeps the service index and vulnerability data in that cache
// whatever the SourceCacheContext says.
using System.Security.Cryptography;
using NuGet.Common;
using NuGet.Configuration;
using NuGet.Packaging;
using NuGet.Protocol;
using NuGet.Protocol.Core.Types;
using NuGet.Protocol.Model;
using NuGet.Versioning;

namespace CatalogSync.Interop;

internal static class FeedCommand
{
    public static async Task<int> Run(string url, string[] ids, StreamWriter stdout)
    {
        var source = new PackageSource(url, "feed") { AllowInsecureConnections = true };
        var repository = Repository.Factory.GetCoreV3(source);
        var logger = NullLogger.Instance;
        var ct = CancellationToken.None;
        using var cache = new SourceCacheContext { NoCache = true, DirectDownload = true };
        var findById = await repository.GetResourceAsync<FindPackageByIdResource>(ct) ?? throw new InvalidOperationException($"{url}: NuGet found no FindPackageByIdResource");
        // Null when the service index has no RegistrationsBaseUrl (NuGet then throws): restore does not need one
        // beside a flat container.
        PackageMetadataResource? metadata;
        try { metadata = await repository.GetResourceAsync<PackageMetadataResource>(ct); }
        catch (InvalidOperationException) { metadata = null; }
        var vulnerabilityInfo = await repository.GetResourceAsync<IVulnerabilityInfoResource>(ct);
        Program.WriteLine(stdout, new
        {
            kind = "resources",
            findPackageById = findById.GetType().Name,
            packageMetadata = metadata?.GetType().Name,
            vulnerabilityInfo = vulnerabilityInfo?.GetType().Name,
        });

        var audit = new Dictionary<string, List<PackageVulnerabilityInfo>>(StringComparer.OrdinalIgnoreCase);
        if (vulnerabilityInfo != null)
        {
            var result = await vulnerabilityInfo.GetVulnerabilityInfoAsync(cache, logger, ct);
            foreach (var error in result.Exceptions?.InnerExceptions ?? [])
                Program.WriteLine(stdout, new { kind = "vulnerabilityError", message = error.Message });
            foreach (var page in result.KnownVulnerabilities ?? [])
                foreach (var (id, list) in page)
                    (audit.TryGetValue(id, out var known) ? known : audit[id] = []).AddRange(list);
        }

        foreach (var id in ids)
        {
            var flat = (await findById.GetAllVersionsAsync(id, cache, logger, ct)).ToList();
            var registration = metadata == null ? [] : (await metadata.GetMetadataAsync(id, includePrerelease: true, includeUnlisted: true, cache, logger, ct)).ToList();
            Program.WriteLine(stdout, new
            {
                kind = "id", id,
                flat = flat.Select(v => v.ToNormalizedString()),
                registration = registration.Select(r => r.Identity.Version.ToNormalizedString()),
            });
            var byVersion = registration.ToDictionary(m => m.Identity.Version, VersionComparer.Default);
            var all = flat.Concat(registration.Select(r => r.Identity.Version)).Distinct<NuGetVersion>(VersionComparer.Default).OrderBy(v => v, VersionComparer.Default);
            foreach (var version in all)
            {
                byVersion.TryGetValue(version, out var entry);
                var inFlat = flat.Contains<NuGetVersion>(version, VersionComparer.Default);
                var download = inFlat ? await Download(findById, id, version, cache, logger, ct) : null;
                var deprecation = entry == null ? null : await entry.GetDeprecationMetadataAsync();
                Program.WriteLine(stdout, new
                {
                    kind = "version",
                    id,
                    version = version.ToNormalizedString(),
                    fullVersion = entry?.Identity.Version.ToFullString() ?? version.ToFullString(),
                    inFlat,
                    inRegistration = entry != null,
                    listed = entry?.IsListed,
                    deprecation = deprecation == null ? null : new
                    {
                        reasons = deprecation.Reasons,
                        message = deprecation.Message,
                        alternatePackage = deprecation.AlternatePackage == null ? null : new
                        {
                            id = deprecation.AlternatePackage.PackageId,
                            range = deprecation.AlternatePackage.Range?.ToNormalizedString(),
                        },
                    },
                    vulnerabilities = entry?.Vulnerabilities?.Select(v => new { advisoryUrl = v.AdvisoryUrl?.ToString(), severity = v.Severity }),
                    registrationDependencies = entry?.DependencySets.SelectMany(g => g.Packages.Select(d => Dependency(g.TargetFramework, d))),
                    audit = audit.TryGetValue(id, out var advisories)
                        ? advisories.Where(a => a.Versions.Satisfies(version)).Select(a => new { url = a.Url.ToString(), severity = (int)a.Severity, versions = a.Versions.ToNormalizedString() })
                        : null,
                    download,
                });
            }
        }
        return 0;
    }

    private static async Task<object> Download(FindPackageByIdResource findById, string id, NuGetVersion version, SourceCacheContext cache, ILogger logger, CancellationToken ct)
    {
        byte[] bytes;
        try
        {
            using var buffer = new MemoryStream();
            if (!await findById.CopyNupkgToStreamAsync(id, version, buffer, cache, logger, ct)) return new { found = false };
            bytes = buffer.ToArray();
        }
        catch (Exception error)
        {
            return new { found = false, error = $"{error.GetType().Name}: {error.Message}" };
        }
        var sha512 = Convert.ToBase64String(SHA512.HashData(bytes));
        try
        {
            using var reader = new PackageArchiveReader(new MemoryStream(bytes));
            var identity = reader.GetIdentity();
            return new
            {
                found = true, size = bytes.Length, sha512,
                nuspec = new
                {
                    id = identity.Id,
                    version = identity.Version.ToFullString(),
                    dependencies = reader.GetPackageDependencies().SelectMany(g => g.Packages.Select(d => Dependency(g.TargetFramework, d))),
                },
            };
        }
        catch (Exception error)
        {
            return new { found = true, size = bytes.Length, sha512, readError = $"{error.GetType().Name}: {error.Message}" };
        }
    }

    private static string Dependency(NuGet.Frameworks.NuGetFramework framework, NuGet.Packaging.Core.PackageDependency dependency) =>
        $"{framework.GetShortFolderName()}:{dependency.Id}:{dependency.VersionRange.ToNormalizedString()}";
}
