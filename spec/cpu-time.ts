/**
 * CPU time of synchronous work, for tests that bound how long a case may take: on a shared machine a
 * wall-clock bound fails whenever other processes take the cores, while the CPU time this process
 * spends on the case stays what the case costs. (It includes the process's other threads, such as
 * the garbage collector's helpers, so keep bounds generous.)
 */
export function cpuMsOf(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}
