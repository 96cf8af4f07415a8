export * from './codes.js';
export * from './errors.js';
export * from './message.js';
export * from './wire.js';
