/**
 * The offers of a RELP `open` command and of its response: one `name[=value[,value…]]` per line.
 * Both sides offer relp_version 0 (the only version there is), their software, and the commands
 * they take; syslog is the only one this service speaks beyond open and close.
 */
const RELP_VERSION = 0;

export type Offers = Map<string, string[]>;

export function parseOffers(data: Buffer): Offers {
  const offers: Offers = new Map();
  for (const line of data.toString('utf8').split('\n')) {
    if (line === '') continue;
    const eq = line.indexOf('=');
    const name = eq < 0 ? line : line.slice(0, eq);
    offers.set(name, eq < 0 ? [] : line.slice(eq + 1).split(','));
  }
  return offers;
}

/** Our offers: the same text in the open command (client) and in its 200 response (server). */
export function ourOffers(): string {
  return `relp_version=${RELP_VERSION}\nrelp_software=hivenode\ncommands=syslog`;
}

/** Why a peer's offers cannot be served, or undefined when they can. */
export function offersProblem(offers: Offers): string | undefined {
  const v = offers.get('relp_version')?.[0];
  if (v === undefined || !/^\d+$/.test(v)) return 'the open command offers no relp_version';
  if (Number(v) > RELP_VERSION) return `relp_version ${v} is not supported (only ${RELP_VERSION})`;
  if (!(offers.get('commands') ?? []).includes('syslog')) return "the peer does not offer the 'syslog' command";
  return undefined;
}
