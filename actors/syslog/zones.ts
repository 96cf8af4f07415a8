/**
 * Time-zone abbreviations that network devices put after BSD timestamps (Cisco `clock timezone`,
 * `service timestamps … show-timezone`). Abbreviations are ambiguous in general (IST is India,
 * Ireland or Israel), so only the common ones with one accepted meaning in device logs are here;
 * CST is read as US Central, as in Cisco's documentation. Anything else is local time.
 */

/** Minutes east of UTC by abbreviation (upper case, as devices write them). */
const ZONES: ReadonlyMap<string, number> = new Map([
  ['UTC', 0],
  ['GMT', 0],
  ['UT', 0],
  ['Z', 0],
  ['WET', 0],
  ['WEST', 60],
  ['BST', 60],
  ['CET', 60],
  ['MET', 60],
  ['CEST', 120],
  ['MEST', 120],
  ['EET', 120],
  ['EEST', 180],
  ['MSK', 180],
  ['SGT', 480],
  ['HKT', 480],
  ['AWST', 480],
  ['JST', 540],
  ['KST', 540],
  ['ACST', 570],
  ['AEST', 600],
  ['AEDT', 660],
  ['NZST', 720],
  ['NZDT', 780],
  ['HST', -600],
  ['AKST', -540],
  ['AKDT', -480],
  ['PST', -480],
  ['PDT', -420],
  ['MST', -420],
  ['MDT', -360],
  ['CST', -360],
  ['CDT', -300],
  ['EST', -300],
  ['EDT', -240],
  ['AST', -240],
  ['ADT', -180],
]);

/** The offset of a zone abbreviation in minutes east of UTC, or undefined when it is not a known one. */
export function zoneOffset(name: string): number | undefined {
  return ZONES.get(name);
}
