/**
 * Preloaded (`node --import`) into the serverless-offline child. The runner passes one end of a pipe as
 * fd 3; if the runner dies without stopping us (SIGKILL, crash), the pipe closes and this kills our whole
 * process group, so no orphan keeps the HTTP port. Only active where the runner set the marker variable,
 * and only in the main thread (worker threads and forked processes inherit `--import`).
 */
import { Socket } from 'node:net';
import { isMainThread } from 'node:worker_threads';

const marker = 'LOCAL_STACK_PARENT_FD';
const fd = Number(process.env[marker]);
delete process.env[marker];

if (isMainThread && Number.isInteger(fd) && fd > 2) {
  const parent = new Socket({ fd, readable: true, writable: false });
  parent.unref();
  parent.on('data', () => {});
  const die = () => {
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {
      process.kill(process.pid, 'SIGKILL');
    }
  };
  parent.on('end', die);
  parent.on('close', die);
  parent.on('error', die);
}
