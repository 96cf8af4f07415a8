// Lint rules of docs/ARCHITECTURE.md (Conventions): floating promises, type-only imports and import
// cycles are errors.
// The layers of docs/ARCHITECTURE.md point one way — protocol, config ← template ← supervisors ←
// actors ← node ← bin — and the rules below refuse an import that runs back up (spec/unit/house/layers.spec.ts
// proves they do).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';
import { readdirSync } from 'node:fs';

/** Each layer and the layers above it, which it may not import. */
const LAYERS = [
  { layer: ['./protocol', './config'], above: ['./template', './supervisors', './actors', './node', './bin', './index.ts'] },
  { layer: ['./template'], above: ['./supervisors', './actors', './node', './bin', './index.ts'] },
  { layer: ['./supervisors'], above: ['./actors', './node', './bin', './index.ts'] },
  { layer: ['./actors'], above: ['./node', './bin', './index.ts'] },
  { layer: ['./node'], above: ['./bin', './index.ts'] },
];
/**
 * The rooms of actors/ that every service builds on, lowest first (docs/ARCHITECTURE.md, Map of the
 * house): each may import only the rooms before it, never a service's room or one after it.
 */
const BASE_ROOMS = ['shared', 'wire', 'observe', 'net', 'auth'];
const ACTOR_ROOMS = readdirSync(new URL('./actors/', import.meta.url), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
const ROOM_ZONES = BASE_ROOMS.map((room, i) => ({
  target: `./actors/${room}`,
  from: ACTOR_ROOMS.filter((r) => !BASE_ROOMS.slice(0, i + 1).includes(r)).map((r) => `./actors/${r}`),
  message: `actors/${room}/ sits below ${BASE_ROOMS.slice(i + 1).map((r) => `actors/${r}/`).concat('the services').join(', ')}: it may import only ${BASE_ROOMS.slice(0, i).map((r) => `actors/${r}/`).join(', ') || 'protocol/ and config/'} (docs/ARCHITECTURE.md, Map of the house)`,
}));
/**
 * The service kinds' rooms: none imports another (a name two services share moves down, to protocol/
 * or a base room), save the flow, which keeps its runs in the queue's stores through their interface
 * — on JetStream held as a queue is, by the queue's holder (lease, fencing, takeover).
 */
const SERVICE_ROOMS = ['echo', 'exec', 'flow', 'gateway', 'httpclient', 'queue', 'sql', 'storage', 'syslog'];
const QUEUE_STORES = ['./store.ts', './memory-store.ts', './sqlite-store.ts', './store-paging.ts', './queue-holder.ts'];
const SERVICE_ZONES = SERVICE_ROOMS.flatMap((room) => {
  const message = `actors/${room}/ is a service: it imports no other service's room (move a shared name down to protocol/ or a base room; docs/ARCHITECTURE.md, Map of the house)`;
  const others = SERVICE_ROOMS.filter((r) => r !== room && !(room === 'flow' && r === 'queue'));
  const zones = [{ target: `./actors/${room}`, from: others.map((r) => `./actors/${r}`), message }];
  if (room === 'flow') zones.push({ target: './actors/flow', from: './actors/queue', except: QUEUE_STORES, message: `${message}; of the queue only its stores (${QUEUE_STORES.join(', ')})` });
  return zones;
});
const LAYER_ZONES = LAYERS.flatMap(({ layer, above }) => layer.map((target) => ({ target, from: above, message: `${target.slice(2)}/ sits below ${above.map((a) => a.slice(2)).join(', ')}: an import may not run back up the layers (docs/ARCHITECTURE.md)` })));

export default tseslint.config(
  { ignores: ['dist/**', 'tmp/**', 'node_modules/**', 'bench/peers/**', 'eslint.config.js', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { import: importPlugin },
    settings: { 'import/resolver': { typescript: { project: './tsconfig.json' }, node: { extensions: ['.ts', '.js'] } }, 'import/parsers': { '@typescript-eslint/parser': ['.ts'] } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import/no-cycle': ['error', { maxDepth: 10 }],
      'no-console': ['error', { allow: ['error'] }],
      'import/no-restricted-paths': ['error', { zones: [...LAYER_ZONES, ...ROOM_ZONES, ...SERVICE_ZONES] }],
      // nact is the runtime's business: everything else speaks the runtime's typed refs
      'no-restricted-imports': ['error', { paths: [{ name: 'nact', message: 'only supervisors/runtime.ts imports nact; use the Runtime (supervisors/runtime.ts).' }] }],
    },
  },
  { files: ['supervisors/runtime.ts', 'bench/hive.ts'], rules: { 'no-restricted-imports': 'off' } },
  { files: ['bin/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'spec/**/*.ts'], rules: { 'no-console': 'off' } },
  // six or more positional parameters take an options object instead (docs/ARCHITECTURE.md, Conventions
  // 11); a hot path that may not allocate one per call says so where it disables the rule
  { files: ['actors/**/*.ts', 'node/**/*.ts', 'bin/**/*.ts', 'supervisors/**/*.ts', 'template/**/*.ts', 'protocol/**/*.ts', 'config/**/*.ts', 'index.ts'], rules: { 'max-params': ['error', 5] } },
);
