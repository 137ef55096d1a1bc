/**
 * A function's handler as serverless.yml names it (`functions/deliveryWorker.handler`): the public entry Lambda
 * invokes, loaded as Lambda's Node runtime loads it (the file under the project root, its named export). The local
 * runner invokes the worker through it, so it runs what the template deploys, not a module of its own choosing.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from './project.ts';

/**
 * Loads the handler `<file>.<export>` of serverless.yml (the file's `.ts` source under the project root).
 *
 * @example
 * const handler = await loadHandler<SqsHandler>('functions/deliveryWorker.handler');
 */
export const loadHandler = async <H>(handler: string): Promise<H> => {
  const dot = handler.lastIndexOf('.');
  if (dot <= 0 || dot === handler.length - 1)
    throw new Error(`serverless.yml: handler ${handler} is not <file>.<export>`);
  const file = join(projectRoot, `${handler.slice(0, dot)}.ts`);
  const exportName = handler.slice(dot + 1);
  const exported = (await import(pathToFileURL(file).href))[exportName];
  if (typeof exported !== 'function')
    throw new Error(`serverless.yml: handler ${handler}: ${file} exports no function ${exportName}`);
  return exported as H;
};
