/**
 * The Chromium the browser tests drive with playwright-core, obtained by `npm install` alone: the npm package
 * `@sparticuz/chromium` ships a brotli-compressed Chromium for x86-64 Linux inside the registry package (no download
 * at install or run time), unpacked to the temporary directory on first use. Elsewhere (another architecture or
 * system) Debian's `/usr/bin/chromium` if installed; else none, and the caller skips with a loud message.
 */
import { existsSync } from 'node:fs';
import { arch, platform } from 'node:os';

/** Where a Chromium came from, and how to launch it. */
export interface FoundChromium {
  executablePath: string;
  source: string;
}

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * A Chromium to launch, or why there is none.
 *
 * @example
 * const found = await findChromium();
 * if ('executablePath' in found) await chromium.launch({ executablePath: found.executablePath, args: CHROMIUM_ARGS });
 */
export const findChromium = async (): Promise<FoundChromium | { missing: string }> => {
  if (platform() === 'linux' && arch() === 'x64') {
    try {
      const { default: sparticuz } = await import('@sparticuz/chromium');
      return { executablePath: await sparticuz.executablePath(), source: 'npm @sparticuz/chromium' };
    } catch (error) {
      process.stderr.write(`@sparticuz/chromium could not be unpacked: ${String(error)}\n`);
    }
  }
  if (existsSync(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, source: DEBIAN_CHROMIUM };
  return {
    missing: `no Chromium: @sparticuz/chromium runs on x86-64 Linux only (this is ${platform()} ${arch()}), and ${DEBIAN_CHROMIUM} is not installed (apt-get install -y chromium)`,
  };
};

/**
 * Flags for a headless Chromium in a container (no sandbox: tests run as root). Unlike @sparticuz/chromium's own
 * list, the web's security stays on (no `--disable-web-security`): the tests check the console's CSP and CORS.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--no-zygote',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
