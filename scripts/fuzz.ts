/**
 * `make fuzz`: the lean wire's HTTP/1.x parser (actors/wire/http1-parser.ts) held against llhttp
 * on 10^6 generated and mutated requests and responses (spec/fuzz/http1-differential.ts). Exit 1
 * when the lean parser accepts a message llhttp refuses or frames otherwise; each such case is
 * printed with its seed and index, and `--seed S --from I --cases 1` repeats it alone.
 *
 *   npx tsx scripts/fuzz.ts [--cases N] [--seed S] [--from I]
 */
import { fuzz } from '../spec/fuzz/http1-differential.js';

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(value) || value < 0) {
    console.error(`fuzz: --${name} takes a whole number, not '${process.argv[i + 1] ?? ''}'`);
    process.exit(2);
  }
  return value;
}

const cases = option('cases', 1_000_000);
const seed = option('seed', Number(process.env.FUZZ_SEED ?? 1));
const from = option('from', 0);
const started = process.hrtime.bigint();
const summary = { cases: 0, accepted: 0, leanRefused: 0, disagreements: 0 };
const findings: ReturnType<typeof fuzz>['findings'] = [];
// in slices, so that a long run shows it is moving
const SLICE = 100_000;
for (let at = from; at < from + cases; at += SLICE) {
  const part = fuzz(seed, Math.min(SLICE, from + cases - at), at, 20 - findings.length);
  summary.cases += part.cases;
  summary.accepted += part.accepted;
  summary.leanRefused += part.leanRefused;
  summary.disagreements += part.disagreements;
  findings.push(...part.findings);
  if (cases > SLICE)
    console.log(`fuzz: ${summary.cases.toLocaleString('en')} cases, ${summary.disagreements} accepted disagreements`);
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
for (const f of findings)
  console.log(
    `\nDISAGREEMENT seed ${f.seed} case ${f.index} (${f.kind}): ${f.problem}\n  bytes: ${f.bytes}\n  again: npx tsx scripts/fuzz.ts --seed ${f.seed} --from ${f.index} --cases 1`,
  );
console.log(
  `fuzz: seed ${seed}, ${summary.cases.toLocaleString('en')} cases in ${seconds.toFixed(1)} s (${Math.round(summary.cases / seconds).toLocaleString('en')}/s): ` +
    `lean parser accepted messages in ${summary.accepted.toLocaleString('en')}, refused in ${summary.leanRefused.toLocaleString('en')}; ` +
    `${summary.disagreements} accepted disagreements with llhttp`,
);
process.exit(summary.disagreements === 0 ? 0 : 1);
