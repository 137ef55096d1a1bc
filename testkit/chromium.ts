/**
 * The Chromium the browser tests drive with playwright-core, obtained by `npm install` alone: the npm package
 * `@sparticuz/chromium` ships a brotli-compressed Chromium for x86-64 Linux inside the registry package (no download
 * at install or run time), unpacked to the temporary directory on first use. Elsewhere (another architecture or
 * system) Debian's `/usr/bin/chromium` if installed; else none, and the caller skips with a loud message.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a Chromium came from, and how to launch it. */
export interface FoundChromium {
  executablePath: string;
  source: string;
}

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * @sparticuz/chromium's binary, unpacked by one process at a time: test files run in parallel workers, and one must
 * not launch the file another is still writing (the package reuses an unpacked binary it finds). A directory made
 * atomically is the lock; one left by a killed run is taken over after a minute.
 */
const unpackedOnce = async (): Promise<string> => {
  const lock = join(tmpdir(), 'dealer-gateway-chromium.lock');
  for (let waited = 0; waited < 60_000; waited += 100) {
    try {
      await mkdir(lock);
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    const { default: sparticuz } = await import('@sparticuz/chromium');
    return await sparticuz.executablePath();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
};

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
      return { executablePath: await unpackedOnce(), source: 'npm @sparticuz/chromium' };
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
