/**
 * The version of catalog-sync, as in package.json (a unit test keeps the two equal). A constant, not
 * a read of package.json, because the Lambda is one bundled file with no package.json beside it.
 */
export const VERSION = '0.1.0';
