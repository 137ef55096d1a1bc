/**
 * Preloaded (`node --import`) into the serverless-offline child, whose threads inherit it: the API handlers it runs
 * get the JSON-protocol AWS clients, as their deployed bundles do (scripts/jsonProtocolClients.ts). The delivery
 * workers run in the runner's own process, with the SDK, as deployed.
 */
import { registerJsonProtocolClients } from '../jsonProtocolClients.ts';

registerJsonProtocolClients();
