// Lint rules from ARCHITECTURE §11: floating promises, type-only imports and import cycles are errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';

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
    },
  },
  { files: ['bin/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'spec/**/*.ts'], rules: { 'no-console': 'off' } },
);
