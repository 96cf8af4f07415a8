// The peers' entry points, re-exported from here so that they resolve against bench/peers/node_modules
// (the benches live one directory up, where the project's own node_modules would be searched).
export { got } from 'got';
export { Queue, Worker, QueueEvents, FlowProducer } from 'bullmq';
export const nodeRedScript = new URL('./node_modules/node-red/red.js', import.meta.url).pathname;
