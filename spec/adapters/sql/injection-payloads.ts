/**
 * Known SQL-injection payload shapes, generated: quote breakouts, comments, UNION selects, stacked
 * queries, boolean tautologies, time delays for PostgreSQL, MySQL and SQL Server, and encodings
 * (URL, double URL, HTML entity, fullwidth and modifier quotes, hex and CHAR() building, backslash
 * escapes, `$` markers that a text-splicing or bind-rewriting layer might read). NUL is left out:
 * PostgreSQL cannot store it in text at all (Sequelize rewrites it before binding).
 */

const BREAKOUTS = ["'", '"', "')", '")', "'))", "1'", '1"', "admin'", '`', "\\'", "%'", "';", "' ", ''];

const TAILS = [
  ' OR 1=1 --',
  " OR '1'='1",
  ' OR 1=1#',
  ' OR 1=1/*',
  ' OR TRUE --',
  ' AND 1=0 UNION SELECT NULL --',
  ' UNION SELECT usename, passwd FROM pg_shadow --',
  ' UNION ALL SELECT table_name, NULL FROM information_schema.tables --',
  '; DROP TABLE victims; --',
  '; DELETE FROM victims; --',
  '; UPDATE victims SET name = $$pwned$$; --',
  '; CREATE TABLE pwned (x int); --',
  '; INSERT INTO victims (name) VALUES (CHR(120)); --',
  '; SELECT pg_sleep(5); --',
  ' AND (SELECT 1 FROM pg_sleep(5)) IS NOT NULL --',
  " AND SLEEP(5) AND '1'='1",
  "; WAITFOR DELAY '0:0:5' --",
  ' || pg_sleep(5) --',
  ' AND 1=CAST((SELECT version()) AS int) --',
  "; COPY victims TO '/tmp/pwned' --",
  ' OR EXISTS(SELECT 1 FROM victims) --',
];

const STANDALONE = [
  '1 OR 1=1',
  '1; DROP TABLE victims',
  "1' OR '1'='1' /*",
  "' OR ''='",
  "'='",
  "' OR 'x'='x",
  "1' ORDER BY 1--+",
  "1' GROUP BY 1,2--+",
  "' HAVING 1=1 --",
  '-1 UNION SELECT 1,2,3',
  "' UNION SELECT NULL,NULL,NULL--",
  '%27%20OR%201%3D1--',
  '%2527%2520OR%25201%253D1--',
  '&#39; OR 1=1 --',
  '\uff07 OR 1=1 --',
  '\u02bc OR 1=1 --',
  '\u2019 OR 1=1 --',
  "\\' OR 1=1 --",
  "\\\\' OR 1=1 --",
  '0x27204f5220313d31',
  'CHAR(39)||CHAR(32)||CHAR(79)||CHAR(82)',
  "E'\\x27 OR 1=1'",
  "U&'\\0027' OR 1=1",
  '$1',
  '$$',
  '$p1',
  '$$; DROP TABLE victims; $$',
  "$tag$'; DROP TABLE victims; --$tag$",
  '{{ name }}',
  '?',
  ':p1',
  '@p1',
  "'; EXEC xp_cmdshell('dir') --",
  "'; SHUTDOWN --",
  "'; SELECT * FROM pg_read_file('/etc/passwd') --",
  "' AND 1=(SELECT COUNT(*) FROM pg_stat_activity) --",
  'name\u0008; DROP TABLE victims',
  "'\n; DROP TABLE victims; --",
  "'\r\nDROP TABLE victims; --",
  "' OR 1=1 LIMIT 1 --",
  '%',
  '_',
  '%%',
  "' OR name LIKE '%",
];

/** At least 200 distinct payloads. */
export function injectionPayloads(): string[] {
  const out = new Set<string>(STANDALONE);
  for (const b of BREAKOUTS) for (const t of TAILS) out.add(`${b}${t}`);
  return [...out];
}
