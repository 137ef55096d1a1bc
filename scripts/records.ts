/**
 * `npm run records -- [filters] [--counts] [--json]` and `npm run records -- <id>`: lists, searches and counts the
 * status records of the running `npm start` or of an AWS stage (--stage), or shows one record in full. See
 * docs/operations.md, "Operations: finding records", and tools/records/constants.ts for the usage.
 */
import { runRecords } from '../tools/records/run.ts';

// `npm run -s records -- --json | head`: the reader has gone, which is no failure of the listing.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

process.exitCode = await runRecords(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  errIsTerminal: process.stderr.isTTY === true,
});
