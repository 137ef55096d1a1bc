// A local serverless plugin: `serverless package` and `serverless deploy` build what they deploy. Each function's
// package.artifact is its esbuild bundle in .esbuild/ (scripts/bundle.ts: per-function ESM bundles, zipped); this
// makes them fresh before osls checks and copies the artifacts, so a fresh clone packages, and a deploy never
// ships bundles older than the code. Not for serverless-offline, which runs the TypeScript handlers themselves.
'use strict';

const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');

/** The project's own Node 24 (the npm `node` package): scripts/bundle.ts is TypeScript, run by type stripping. */
const nodeFor = (serviceDir) => {
  const local = path.join(serviceDir, 'node_modules', '.bin', 'node');
  return existsSync(local) ? local : process.execPath;
};

class BundlePlugin {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'before:package:createDeploymentArtifacts': () => this.bundle(),
      // `serverless deploy function -f <name>` packages that function alone.
      'before:deploy:function:packageFunction': () => this.bundle(),
    };
  }

  bundle() {
    if (process.env.HANDLER_CODE === 'typescript') return;
    const serviceDir = this.serverless.serviceDir;
    execFileSync(nodeFor(serviceDir), [path.join(serviceDir, 'scripts', 'bundle.ts')], {
      cwd: serviceDir,
      stdio: 'inherit',
      env: process.env,
    });
  }
}

module.exports = BundlePlugin;
