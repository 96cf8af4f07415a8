/**
 * The physical baseline of the queue bench: raw fsync'd group-commit appends with node:fs alone — no
 * hivenode code. Producers hand over records and wait until the batch holding theirs is written and
 * fdatasync'd. `windowMs` is the group-commit interval: 0 starts the next commit as soon as the last
 * one finished; 1 waits 1 ms first, the baseline the queue issue states its target against ("34,000
 * records/s with 64 writers, 1 ms group commit").
 */
import { open } from 'node:fs/promises';

export async function rawAppendRate(
  file: string,
  records: number,
  producers: number,
  windowMs: number,
  record: (i: number) => string,
): Promise<number> {
  const fh = await open(file, 'a');
  let pending: { line: string; done: () => void }[] = [];
  let committing = false;
  const commit = async (): Promise<void> => {
    committing = true;
    if (windowMs > 0) await new Promise((r) => setTimeout(r, windowMs));
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      await fh.write(batch.map((p) => p.line).join(''));
      await fh.datasync();
      for (const p of batch) p.done();
      if (windowMs > 0 && pending.length > 0) await new Promise((r) => setTimeout(r, windowMs));
    }
    committing = false;
  };
  const append = (line: string): Promise<void> =>
    new Promise((done) => {
      pending.push({ line, done });
      if (!committing) void commit();
    });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async () => {
      while (next < records) await append(`${record(next++)}\n`);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await fh.close();
  return records / seconds;
}
