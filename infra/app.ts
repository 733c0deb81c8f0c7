/**
 * The CDK app (`cdk.json`: `npx tsx infra/app.ts`). Reads its configuration from context (defaults in
 * cdk.json, overrides with `-c catalog-sync:<setting>=<value>`), builds one stack, and checks it with
 * cdk-nag's AwsSolutions pack: synthesis fails on any finding that is not acknowledged in code.
 */
import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { pathToFileURL } from 'node:url';
import { CatalogSyncPropsError } from './catalog-sync-props.js';
import { appConfigFromContext, ContextError } from './config.js';
import { SettingsError } from '../lambda/contract/index.js';
import { CatalogSyncStack } from './stack.js';

/** Builds the app: for `cdk synth`/`deploy` (context from the CLI) and for the tests (context given). */
export function buildApp(props: AppProps = {}): { app: App; stack: CatalogSyncStack } {
  const app = new App(props);
  const config = appConfigFromContext(app.node);
  // Environment-agnostic on purpose (no `env`): no lookups, no credentials needed to synthesize.
  const stack = new CatalogSyncStack(app, config.stackName, { config });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return { app, stack };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    buildApp().app.synth();
  } catch (error) {
    // A bad setting is the user's to fix: its message, which names the key, not a stack trace.
    if (!(error instanceof ContextError || error instanceof SettingsError || error instanceof CatalogSyncPropsError))
      throw error;
    process.stderr.write(`catalog-sync: ${error.message}\n`);
    process.exitCode = 1;
  }
}
