/**
 * Real-world syslog lines, each with its source and the Data fields it must decode to (a subset of
 * the keys of docs/ARCHITECTURE.md, Result shapes; `cef` lists cef_* keys without the prefix).
 * Decoded with DecodeCEF on, received at NOW (2024-03-15 12:00 local time) unless a line carries
 * its own year. Timestamps without a zone are local time, so expectations are built with the
 * local-time Date constructor and the corpus holds in any TZ.
 */
export const NOW = new Date(2024, 2, 15, 12, 0, 0);

export type Field =
  | 'facility'
  | 'severity'
  | 'priority'
  | 'timestamp'
  | 'hostname'
  | 'appname'
  | 'procid'
  | 'msgid'
  | 'message'
  | 'structureddata'
  | 'format';
export type Expect = Partial<Record<Field, string>> & { cef?: Record<string, string> };

export interface CorpusLine {
  source: string;
  line: string;
  want: Expect;
  /** False for lines that are not well-formed syslog of any kind (the fuzz test only requires well-formed lines to decode as their format). */
  malformed?: boolean;
}

/** ISO text of a local time. */
export const local = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms = 0): string =>
  new Date(y, mo - 1, d, h, mi, s, ms).toISOString();
const utc = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms = 0): string =>
  new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms)).toISOString();

export const CORPUS: CorpusLine[] = [
  // --- RFC 5424 §6.5 examples (the 'BOM' placeholder of example 3 is text here, as the RFC's is; the real one is U+FEFF)
  {
    source: 'RFC 5424 example 1',
    line: "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF'su root' failed for lonvick on /dev/pts/8",
    want: {
      facility: 'auth',
      severity: 'critical',
      priority: '34',
      timestamp: '2003-10-11T22:14:15.003Z',
      hostname: 'mymachine.example.com',
      appname: 'su',
      procid: '',
      msgid: 'ID47',
      structureddata: '',
      message: "'su root' failed for lonvick on /dev/pts/8",
      format: 'RFC5424',
    },
  },
  {
    source: 'RFC 5424 example 2',
    line: "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.",
    want: {
      facility: 'local4',
      severity: 'notice',
      timestamp: '2003-08-24T12:14:15.000Z',
      hostname: '192.0.2.1',
      appname: 'myproc',
      procid: '8710',
      msgid: '',
      message: "%% It's time to make the do-nuts.",
      format: 'RFC5424',
    },
  },
  {
    source: 'RFC 5424 example 3',
    line: '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] BOMAn application event log entry...',
    want: {
      appname: 'evntslog',
      msgid: 'ID47',
      structureddata: '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"]',
      message: 'BOMAn application event log entry...',
    },
  },
  {
    source: 'RFC 5424 example 4',
    line: '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
    want: {
      structureddata:
        '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
      message: '',
      format: 'RFC5424',
    },
  },
  {
    source: 'RFC 5424 all nil',
    line: '<14>1 - - - - - -',
    want: {
      facility: 'user',
      severity: 'informational',
      timestamp: '',
      hostname: '',
      appname: '',
      procid: '',
      msgid: '',
      structureddata: '',
      message: '',
      format: 'RFC5424',
    },
  },
  {
    source: 'RFC 5424 SD escapes',
    line: '<13>1 2024-03-15T10:00:00+01:00 host app 123 MSG [sd@1 a="x\\"y" b="z\\]w" c="\\\\" d="C:\\Windows"] with escapes',
    want: {
      timestamp: '2024-03-15T09:00:00.000Z',
      structureddata: '[sd@1 a="x\\"y" b="z\\]w" c="\\\\" d="C:\\Windows"]',
      message: 'with escapes',
      format: 'RFC5424',
    },
  },
  {
    source: 'RFC 5424 lowest priority',
    line: '<0>1 2024-03-15T10:00:00Z h a p m - emergency',
    want: { facility: 'kern', severity: 'emergency', priority: '0', procid: 'p', msgid: 'm' },
  },
  {
    source: 'RFC 5424 highest priority',
    line: '<191>1 2024-03-15T10:00:00Z h a p m - lowest',
    want: { facility: 'local7', severity: 'debug', priority: '191' },
  },
  {
    source: 'RFC 5424 UTF-8 with BOM',
    line: '<13>1 2024-03-15T10:00:00Z h a - - - \uFEFFünïcödé ✓ 日本語',
    want: { message: 'ünïcödé ✓ 日本語', format: 'RFC5424' },
  },
  {
    source: 'RFC 5424 UTF-8 without BOM',
    line: '<13>1 2024-03-15T10:00:00Z h a - - - ünïcödé',
    want: { message: 'ünïcödé' },
  },
  {
    source: 'RFC 5424 message with brackets and =',
    line: '<134>1 2024-03-15T10:00:00Z fw1 kernel - - - multi word message with = and [brackets]',
    want: { facility: 'local0', message: 'multi word message with = and [brackets]' },
  },
  {
    source: 'RFC 5424 leap-second-free max fraction',
    line: '<30>1 2024-03-15T10:00:00.123456Z web01 nginx 4242 ACCESS [meta@1 ip="10.0.0.1"] GET /index.html 200',
    want: {
      timestamp: '2024-03-15T10:00:00.123Z',
      hostname: 'web01',
      appname: 'nginx',
      procid: '4242',
      msgid: 'ACCESS',
      structureddata: '[meta@1 ip="10.0.0.1"]',
      message: 'GET /index.html 200',
      facility: 'daemon',
      severity: 'informational',
    },
  },
  // --- rsyslog templates
  {
    source: 'rsyslog RSYSLOG_SyslogProtocol23Format (legacy msg keeps its leading space; trailing LF)',
    line: '<30>1 2024-03-15T11:22:33.456789+01:00 server1 systemd 1 - -  Started Session 42 of user root.\n',
    want: {
      timestamp: '2024-03-15T10:22:33.456Z',
      hostname: 'server1',
      appname: 'systemd',
      procid: '1',
      message: ' Started Session 42 of user root.',
      format: 'RFC5424',
    },
  },
  {
    source: 'rsyslog RSYSLOG_ForwardFormat',
    line: '<30>2024-03-15T11:22:33.456789+01:00 server1 systemd[1]: Started Session 42 of user root.',
    want: {
      timestamp: '2024-03-15T10:22:33.456Z',
      hostname: 'server1',
      appname: 'systemd',
      procid: '1',
      message: 'Started Session 42 of user root.',
      format: 'RFC3164',
    },
  },
  {
    source: 'rsyslog RSYSLOG_ForwardFormat (authpriv)',
    line: '<86>2024-03-15T11:22:33+01:00 db2 sshd[2222]: Accepted publickey for deploy from 10.1.1.1 port 50522 ssh2: ED25519 SHA256:abc',
    want: {
      timestamp: '2024-03-15T10:22:33.000Z',
      hostname: 'db2',
      appname: 'sshd',
      procid: '2222',
      facility: 'authpriv',
      severity: 'informational',
      message: 'Accepted publickey for deploy from 10.1.1.1 port 50522 ssh2: ED25519 SHA256:abc',
    },
  },
  {
    source: 'rsyslog RSYSLOG_TraditionalForwardFormat',
    line: '<30>Mar 15 11:22:33 server1 systemd[1]: Started Daily apt activities.',
    want: {
      timestamp: local(2024, 3, 15, 11, 22, 33),
      hostname: 'server1',
      appname: 'systemd',
      procid: '1',
      message: 'Started Daily apt activities.',
      format: 'RFC3164',
    },
  },
  {
    source: 'rsyslog traditional, day padded with a space',
    line: '<13>Mar  5 01:02:03 host logger: single digit day',
    want: { timestamp: local(2024, 3, 5, 1, 2, 3), hostname: 'host', appname: 'logger', message: 'single digit day' },
  },
  {
    source: 'rsyslog traditional, 24-hour clock',
    line: '<13>Mar 15 23:59:59 host app: late evening',
    want: { timestamp: local(2024, 3, 15, 23, 59, 59), message: 'late evening' },
  },
  {
    source: 'BSD date of last December received in March',
    line: '<13>Dec 31 23:59:59 host app: from last year',
    want: { timestamp: local(2023, 12, 31, 23, 59, 59) },
  },
  {
    source: 'BSD leap day',
    line: '<13>Feb 29 12:00:00 host app: leap day',
    want: { timestamp: local(2024, 2, 29, 12, 0, 0) },
  },
  {
    source: 'BSD date a few days ahead (clock skew) stays this year',
    line: '<13>Mar 18 08:00:00 host app: skewed',
    want: { timestamp: local(2024, 3, 18, 8, 0, 0) },
  },
  {
    source: 'BSD date weeks ahead is last year',
    line: '<13>Apr 20 08:00:00 host app: old',
    want: { timestamp: local(2023, 4, 20, 8, 0, 0) },
  },
  // --- captured on this machine: logger (util-linux 2.38.1) → rsyslogd 8.2302 → each forwarding template
  {
    source: 'captured: rsyslog ForwardFormat of a logger --rfc3164 line',
    line: '<156>2026-11-22T13:29:48+00:00 vm app[5494]: from 3164',
    want: {
      facility: 'local3',
      severity: 'warning',
      timestamp: '2026-11-22T13:29:48.000Z',
      hostname: 'vm',
      appname: 'app',
      procid: '5494',
      message: 'from 3164',
      format: 'RFC3164',
    },
  },
  {
    source: 'captured: rsyslog SyslogProtocol23Format of a logger --rfc3164 line',
    line: '<156>1 2026-11-22T13:29:48+00:00 vm app 5494 - -  from 3164\n',
    want: {
      timestamp: '2026-11-22T13:29:48.000Z',
      hostname: 'vm',
      appname: 'app',
      procid: '5494',
      msgid: '',
      structureddata: '',
      message: ' from 3164',
      format: 'RFC5424',
    },
  },
  {
    source: 'captured: rsyslog TraditionalForwardFormat of a logger --rfc3164 line',
    line: '<156>Nov 22 13:29:48 vm app[5494]: from 3164',
    want: {
      timestamp: local(2023, 11, 22, 13, 29, 48),
      hostname: 'vm',
      appname: 'app',
      procid: '5494',
      message: 'from 3164',
      format: 'RFC3164',
    },
  },
  {
    source: 'captured: rsyslog SyslogProtocol23Format of a logger --rfc5424 line',
    line: '<13>1 2026-11-22T13:29:48.116443+00:00 vm app5 - M1 [timeQuality tzKnown="1" isSynced="0"] from 5424\n',
    want: {
      timestamp: '2026-11-22T13:29:48.116Z',
      appname: 'app5',
      procid: '',
      msgid: 'M1',
      structureddata: '[timeQuality tzKnown="1" isSynced="0"]',
      message: 'from 5424',
      format: 'RFC5424',
    },
  },
  // rsyslog writes an RFC 5424 APP-NAME without PROCID as a bare tag with no colon, and reads it back as the tag (see BARE_TAG in rfc3164.ts)
  {
    source: 'captured: rsyslog ForwardFormat of a logger --rfc5424 line (tag without colon)',
    line: '<13>2026-11-22T13:29:48.116443+00:00 vm app5 from 5424',
    want: {
      timestamp: '2026-11-22T13:29:48.116Z',
      hostname: 'vm',
      appname: 'app5',
      message: 'from 5424',
      format: 'RFC3164',
    },
  },
  {
    source: 'captured: rsyslog TraditionalForwardFormat of a logger (RFC 5424 default) line (tag without colon)',
    line: '<163>Nov 24 08:05:02 vm viarsys m08 via rsyslog',
    want: {
      facility: 'local4',
      severity: 'error',
      hostname: 'vm',
      appname: 'viarsys',
      procid: '',
      message: 'm08 via rsyslog',
      format: 'RFC3164',
    },
  },
  {
    source: 'captured: logger --rfc5424 with UTF-8 (no BOM sent)',
    line: '<13>1 2026-11-22T13:29:38.933531+00:00 vm root - - [timeQuality tzKnown="1" isSynced="0"] ünï',
    want: { appname: 'root', message: 'ünï', format: 'RFC5424' },
  },
  // --- Linux daemons as forwarded by rsyslog / journald
  {
    source: 'sudo',
    line: '<85>Mar 15 11:22:33 myhost sudo:   alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/bin/ls',
    want: {
      appname: 'sudo',
      procid: '',
      facility: 'authpriv',
      severity: 'notice',
      message: '  alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/bin/ls',
    },
  },
  {
    source: 'cron',
    line: '<78>Mar 15 11:22:01 host CRON[12345]: (root) CMD (run-parts /etc/cron.hourly)',
    want: {
      facility: 'cron',
      severity: 'informational',
      appname: 'CRON',
      procid: '12345',
      message: '(root) CMD (run-parts /etc/cron.hourly)',
    },
  },
  {
    source: 'postfix (tag with a slash)',
    line: '<22>Mar 15 11:22:01 mx postfix/smtpd[4321]: connect from unknown[192.0.2.7]',
    want: {
      facility: 'mail',
      hostname: 'mx',
      appname: 'postfix/smtpd',
      procid: '4321',
      message: 'connect from unknown[192.0.2.7]',
    },
  },
  {
    source: 'kernel',
    line: '<4>Mar 15 11:22:33 host kernel: [12345.678901] usb 1-1: new high-speed USB device number 2',
    want: {
      facility: 'kern',
      severity: 'warning',
      appname: 'kernel',
      message: '[12345.678901] usb 1-1: new high-speed USB device number 2',
    },
  },
  {
    source: 'dockerd (logfmt message)',
    line: '<30>Mar 15 11:22:33 host dockerd[800]: time="2024-03-15T11:22:33Z" level=info msg="ok"',
    want: { appname: 'dockerd', procid: '800', message: 'time="2024-03-15T11:22:33Z" level=info msg="ok"' },
  },
  {
    source: 'systemd-journald via imjournal, RSYSLOG_ForwardFormat with nanosecond-free microseconds',
    line: '<31>2024-03-15T11:22:33.000001+00:00 node7 systemd-logind[612]: New session 9 of user bob.',
    want: { severity: 'debug', timestamp: '2024-03-15T11:22:33.000Z', appname: 'systemd-logind', procid: '612' },
  },
  {
    source: 'systemd-netlogd (RFC 5424)',
    line: '<30>1 2024-03-15T11:22:33.123456+00:00 node7 systemd 1 - - Started Session 7 of User alice.',
    want: { appname: 'systemd', procid: '1', message: 'Started Session 7 of User alice.', format: 'RFC5424' },
  },
  {
    source: 'nginx error_log to syslog',
    line: '<187>Mar 15 11:22:33 web01 nginx: 2024/03/15 11:22:33 [error] 1234#0: *1 open() "/x" failed (2: No such file or directory)',
    want: {
      facility: 'local7',
      severity: 'error',
      hostname: 'web01',
      appname: 'nginx',
      message: '2024/03/15 11:22:33 [error] 1234#0: *1 open() "/x" failed (2: No such file or directory)',
    },
  },
  {
    source: 'HAProxy to a remote server (no hostname)',
    line: '<134>Mar 15 11:22:33 haproxy[4567]: 10.0.0.9:51234 [15/Mar/2024:11:22:33.123] fe be/srv1 0/0/1/2/3 200 512 - - ---- 1/1/0/0/0 0/0 "GET / HTTP/1.1"',
    want: {
      hostname: '',
      appname: 'haproxy',
      procid: '4567',
      message:
        '10.0.0.9:51234 [15/Mar/2024:11:22:33.123] fe be/srv1 0/0/1/2/3 200 512 - - ---- 1/1/0/0/0 0/0 "GET / HTTP/1.1"',
    },
  },
  {
    source: 'macOS launchd (pid without colon)',
    line: '<13>Mar 15 11:22:33 MacBook-Pro.local com.apple.xpc.launchd[1] (com.apple.foo[123]): Service exited with abnormal code: 1',
    want: {
      hostname: 'MacBook-Pro.local',
      appname: 'com.apple.xpc.launchd',
      procid: '1',
      message: '(com.apple.foo[123]): Service exited with abnormal code: 1',
    },
  },
  {
    source: 'NXLog Windows event (tabs)',
    line: '<14>Mar 15 11:22:33 WIN-SRV01 MSWinEventLog\t1\tSecurity\t123\tFri Mar 15 11:22:33 2024\t4624',
    want: {
      hostname: 'WIN-SRV01',
      appname: '',
      message: 'MSWinEventLog\t1\tSecurity\t123\tFri Mar 15 11:22:33 2024\t4624',
    },
  },
  // --- logger (util-linux)
  {
    source: 'logger --rfc3164 -n host',
    line: '<13>Mar 15 11:22:33 myhost alice: hello from logger',
    want: { hostname: 'myhost', appname: 'alice', procid: '', message: 'hello from logger', format: 'RFC3164' },
  },
  {
    source: 'logger --rfc3164 -i -t mytag',
    line: '<13>Mar 15 11:22:33 myhost mytag[999]: tagged with pid',
    want: { appname: 'mytag', procid: '999', message: 'tagged with pid' },
  },
  {
    source: 'logger to /dev/log (no hostname)',
    line: '<13>Mar 15 11:22:33 alice: local socket form',
    want: { hostname: '', appname: 'alice', message: 'local socket form' },
  },
  {
    source: 'logger --rfc5424 (default)',
    line: '<13>1 2024-03-15T11:22:33.123456+00:00 myhost alice - - [timeQuality tzKnown="1" isSynced="1" syncAccuracy="123456"] logger rfc5424',
    want: {
      appname: 'alice',
      structureddata: '[timeQuality tzKnown="1" isSynced="1" syncAccuracy="123456"]',
      message: 'logger rfc5424',
      format: 'RFC5424',
    },
  },
  {
    source: 'logger --rfc5424=notime,notq --msgid',
    line: '<13>1 - myhost alice - ID7 - no time',
    want: { timestamp: '', msgid: 'ID7', message: 'no time', format: 'RFC5424' },
  },
  {
    source: 'logger --sd-id --sd-param',
    line: '<13>1 2024-03-15T11:22:33.123456+00:00 myhost alice 4242 - [timeQuality tzKnown="1" isSynced="0"][zoo@123 tiger="hungry" zebra="running"] sd params',
    want: {
      procid: '4242',
      structureddata: '[timeQuality tzKnown="1" isSynced="0"][zoo@123 tiger="hungry" zebra="running"]',
      message: 'sd params',
    },
  },
  // --- minimal and partial RFC 3164
  {
    source: 'no timestamp, no tag',
    line: '<13>just a message',
    want: { timestamp: '', hostname: '', appname: '', message: 'just a message' },
  },
  {
    source: 'no PRI at all',
    line: 'no pri at all',
    want: { priority: '13', facility: 'user', severity: 'notice', message: 'no pri at all', format: 'RFC3164' },
  },
  {
    source: 'tag without timestamp',
    line: '<13>tag: message without timestamp',
    want: { appname: 'tag', message: 'message without timestamp' },
  },
  {
    source: 'tag[pid] without timestamp',
    line: '<13>tag[77]: with pid, without timestamp',
    want: { appname: 'tag', procid: '77', message: 'with pid, without timestamp' },
  },
  // rsyslogd reads the first word after the hostname as the tag (RFC 3164 §4.1.3: the TAG comes there)
  {
    source: 'bare tag (first word after the hostname)',
    line: '<13>Mar 15 11:22:33 host message without a colon',
    want: { hostname: 'host', appname: 'message', message: 'without a colon' },
  },
  {
    source: 'no tag (first word not a program name)',
    line: '<13>Mar 15 11:22:33 host 10.0.0.1 connected',
    want: { hostname: 'host', appname: '', message: '10.0.0.1 connected' },
  },
  {
    source: 'no PRI, BSD header (a log file line)',
    line: 'Mar 15 11:22:33 host app[9]: from a file',
    want: { priority: '13', hostname: 'host', appname: 'app', procid: '9', message: 'from a file' },
  },
  {
    source: 'ISO timestamp with a space instead of T',
    line: '<13>2024-03-15 11:22:33 host app: space separated',
    want: { timestamp: local(2024, 3, 15, 11, 22, 33), hostname: 'host', appname: 'app' },
  },
  {
    source: 'ISO timestamp with nanoseconds',
    line: '<13>2024-03-15T11:22:33.123456789+02:00 host app: nanoseconds',
    want: { timestamp: '2024-03-15T09:22:33.123Z' },
  },
  {
    source: 'BSD with fractions',
    line: '<13>Mar 15 11:22:33.123456 host app: fractional bsd',
    want: { timestamp: local(2024, 3, 15, 11, 22, 33, 123) },
  },
  {
    source: 'pid glued to message',
    line: '<13>Mar 15 11:22:33 host app[1]:glued',
    want: { appname: 'app', procid: '1', message: 'glued' },
  },
  // --- Cisco IOS, ASA, NX-OS
  {
    source: 'Cisco IOS, sequence number, * clock mark, UTC',
    line: '<189>123: *Mar  1 00:00:04.123 UTC: %SYS-5-CONFIG_I: Configured from console by vty0 (10.0.0.5)',
    want: {
      facility: 'local7',
      severity: 'notice',
      timestamp: utc(2024, 3, 1, 0, 0, 4, 123),
      hostname: '',
      msgid: 'SYS-5-CONFIG_I',
      message: '%SYS-5-CONFIG_I: Configured from console by vty0 (10.0.0.5)',
    },
  },
  {
    source: 'Cisco IOS, no zone',
    line: '<189>45: Mar 15 11:22:33.456: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up',
    want: {
      timestamp: local(2024, 3, 15, 11, 22, 33, 456),
      msgid: 'LINK-3-UPDOWN',
      message: '%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up',
    },
  },
  {
    source: 'Cisco IOS, CET',
    line: '<189>46: Mar 15 11:22:33.456 CET: %LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, changed state to up',
    want: { timestamp: utc(2024, 3, 15, 10, 22, 33, 456), msgid: 'LINEPROTO-5-UPDOWN' },
  },
  {
    source: 'Cisco IOS, . clock mark, own zone name',
    line: '<190>47: .Mar 15 11:22:33.456 MYTZ: %SYS-6-CLOCKUPDATE: System clock has been updated',
    want: { timestamp: local(2024, 3, 15, 11, 22, 33, 456), severity: 'informational', msgid: 'SYS-6-CLOCKUPDATE' },
  },
  {
    source: 'Cisco IOS, origin-id hostname',
    line: '<189>52: router1: *Mar  1 00:00:04: %SYS-5-RESTART: System restarted',
    want: {
      hostname: 'router1',
      timestamp: local(2024, 3, 1, 0, 0, 4),
      msgid: 'SYS-5-RESTART',
      message: '%SYS-5-RESTART: System restarted',
    },
  },
  {
    source: 'Cisco IOS, no timestamps',
    line: '<187>53: %LINK-3-UPDOWN: Interface Serial0, changed state to down',
    want: {
      timestamp: '',
      msgid: 'LINK-3-UPDOWN',
      message: '%LINK-3-UPDOWN: Interface Serial0, changed state to down',
    },
  },
  {
    source: 'Cisco IOS, timestamps with year',
    line: '<190>54: Mar 15 2023 11:22:33.456 UTC: %SEC-6-IPACCESSLOGP: list 101 denied tcp 10.0.0.1(1234) -> 10.0.0.2(80), 1 packet',
    want: { timestamp: utc(2023, 3, 15, 11, 22, 33, 456), msgid: 'SEC-6-IPACCESSLOGP' },
  },
  {
    source: 'Cisco ASA',
    line: '<166>Mar 15 2024 11:22:33: %ASA-6-302013: Built outbound TCP connection 1 for outside:1.2.3.4/443',
    want: {
      timestamp: local(2024, 3, 15, 11, 22, 33),
      facility: 'local4',
      severity: 'informational',
      hostname: '',
      msgid: 'ASA-6-302013',
      message: '%ASA-6-302013: Built outbound TCP connection 1 for outside:1.2.3.4/443',
    },
  },
  {
    source: 'Cisco ASA with device-id',
    line: '<166>Mar 15 2024 11:22:33 asa01 : %ASA-6-302014: Teardown TCP connection',
    want: { hostname: 'asa01', msgid: 'ASA-6-302014', message: '%ASA-6-302014: Teardown TCP connection' },
  },
  {
    source: 'Cisco ASA without timestamp',
    line: '<164>%ASA-4-106023: Deny tcp src outside:1.2.3.4/5 dst inside:10.0.0.1/80 by access-group "outside" [0x0, 0x0]',
    want: {
      severity: 'warning',
      appname: '',
      msgid: 'ASA-4-106023',
      message:
        '%ASA-4-106023: Deny tcp src outside:1.2.3.4/5 dst inside:10.0.0.1/80 by access-group "outside" [0x0, 0x0]',
    },
  },
  {
    source: 'Cisco NX-OS',
    line: '<189>: 2024 Mar 15 11:22:33 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up in mode access',
    want: {
      timestamp: utc(2024, 3, 15, 11, 22, 33),
      msgid: 'ETHPORT-5-IF_UP',
      message: '%ETHPORT-5-IF_UP: Interface Ethernet1/1 is up in mode access',
    },
  },
  {
    source: 'Cisco NX-OS with hostname',
    line: '<187>2024 Mar 15 11:22:33 nxos %ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/2 is down',
    want: { facility: 'local7', severity: 'error', hostname: 'nxos', msgid: 'ETHPORT-5-IF_DOWN_LINK_FAILURE' },
  },
  // --- Juniper
  {
    source: 'Juniper SRX (BSD)',
    line: '<28>Mar 15 11:22:33 srx1 RT_FLOW: RT_FLOW_SESSION_CREATE: session created 10.0.0.1/1->10.0.0.2/2',
    want: {
      facility: 'daemon',
      severity: 'warning',
      hostname: 'srx1',
      appname: 'RT_FLOW',
      message: 'RT_FLOW_SESSION_CREATE: session created 10.0.0.1/1->10.0.0.2/2',
    },
  },
  {
    source: 'Juniper SRX structured-data',
    line: '<14>1 2024-03-15T11:22:33.123+01:00 srx1 RT_FLOW - RT_FLOW_SESSION_CREATE [junos@2636.1.1.1.2.26 source-address="10.0.0.1" source-port="1234" destination-address="10.0.0.2"] session created',
    want: {
      timestamp: '2024-03-15T10:22:33.123Z',
      appname: 'RT_FLOW',
      procid: '',
      msgid: 'RT_FLOW_SESSION_CREATE',
      message: 'session created',
      format: 'RFC5424',
    },
  },
  {
    source: 'Junos mgd (RFC 5424)',
    line: '<165>1 2024-03-15T11:22:33.000Z mx1 mgd 3333 UI_COMMIT [junos@2636.1.1.1.2.18 username="admin"] User committed',
    want: { appname: 'mgd', procid: '3333', msgid: 'UI_COMMIT', message: 'User committed' },
  },
  {
    source: 'Junos mgd (BSD)',
    line: "<30>Mar 15 11:22:33 mx1 mgd[3333]: UI_COMMIT: User 'admin' requested 'commit' operation",
    want: {
      hostname: 'mx1',
      appname: 'mgd',
      procid: '3333',
      message: "UI_COMMIT: User 'admin' requested 'commit' operation",
    },
  },
  // --- other appliances
  {
    source: 'FortiGate (key=value, no header)',
    line: '<189>date=2024-03-15 time=11:22:33 devname="FG100E" devid="FG100E1234" logid="0000000013" type="traffic"',
    want: {
      facility: 'local7',
      timestamp: '',
      appname: '',
      message: 'date=2024-03-15 time=11:22:33 devname="FG100E" devid="FG100E1234" logid="0000000013" type="traffic"',
    },
  },
  {
    source: 'Palo Alto (CSV after a BSD header)',
    line: '<14>Mar 15 11:22:33 PA-VM 1,2024/03/15 11:22:33,012345678901,TRAFFIC,end,2561,2024/03/15 11:22:33,10.0.0.1,8.8.8.8',
    want: {
      hostname: 'PA-VM',
      appname: '',
      message: '1,2024/03/15 11:22:33,012345678901,TRAFFIC,end,2561,2024/03/15 11:22:33,10.0.0.1,8.8.8.8',
    },
  },
  // --- CEF
  {
    source: 'CEF without envelope (ArcSight guide)',
    line: 'CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232',
    want: {
      format: 'CEF',
      priority: '13',
      message: 'CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232',
      cef: {
        version: '0',
        vendor: 'Security',
        product: 'threatmanager',
        device_version: '1.0',
        signature_id: '100',
        name: 'worm successfully stopped',
        severity: '10',
        src: '10.0.0.1',
        dst: '2.1.2.2',
        spt: '1232',
      },
    },
  },
  {
    source: 'CEF in BSD envelope, escaped pipe in header',
    line: '<134>Mar 15 11:22:33 host CEF:0|Vendor|Prod|2.0|sig1|Name with \\| pipe|5|msg=hello world act=blocked',
    want: {
      format: 'RFC3164',
      hostname: 'host',
      appname: '',
      cef: { name: 'Name with | pipe', msg: 'hello world', act: 'blocked' },
    },
  },
  {
    source: 'CEF in BSD envelope without hostname',
    line: '<134>Mar 15 11:22:33 CEF:0|Vendor|Prod|2.0|sig1|n|5|act=allowed',
    want: { hostname: '', cef: { vendor: 'Vendor', act: 'allowed' } },
  },
  {
    source: 'CEF in RFC 5424 envelope, extension escapes',
    line: '<134>1 2024-03-15T11:22:33Z host app - - - CEF:1|V|P|1|id|n|3|cs1=a\\=b cs2=line\\nbreak cs3=back\\\\slash',
    want: { format: 'RFC5424', cef: { version: '1', cs1: 'a=b', cs2: 'line\nbreak', cs3: 'back\\slash' } },
  },
  {
    source: 'CEF escaped backslash in header, empty extension',
    line: 'CEF:0|V\\\\x|P|1|id|name|Low|',
    want: { cef: { vendor: 'V\\x', severity: 'Low' } },
  },
  {
    source: 'CEF values with spaces and URLs',
    line: 'CEF:0|V|P|1|id|name|7|request=https://example.com/a?b\\=c&d\\=e suser=bob smith cs1Label=Policy Name cs1=Allow all',
    want: {
      cef: { request: 'https://example.com/a?b=c&d=e', suser: 'bob smith', cs1Label: 'Policy Name', cs1: 'Allow all' },
    },
  },
  {
    source: 'CEF ArcSight guide: escaped = in value',
    line: 'CEF:0|security|threatmanager|1.0|100|detected an equal sign in message|10|src=10.0.0.1 act=blocked a \\= dst=1.1.1.1',
    want: { cef: { act: 'blocked a =', dst: '1.1.1.1' } },
  },
  {
    source: 'Trend Micro Deep Security CEF',
    line: '<134>Mar 15 11:22:33 dsm CEF:0|Trend Micro|Deep Security Agent|20.0.0|4000000|Eicar_test_file|6|cn1=1 cn1Label=Host ID dvchost=hostname fname=eicar.exe act=Delete',
    want: {
      hostname: 'dsm',
      cef: { vendor: 'Trend Micro', signature_id: '4000000', cn1Label: 'Host ID', fname: 'eicar.exe', act: 'Delete' },
    },
  },
  // --- malformed: still forwarded, leniently
  {
    source: 'PRI over 191',
    line: '<999>1 2024-03-15T11:22:33Z h a - - - pri too large',
    want: { format: 'RFC3164', priority: '13', message: '<999>1 2024-03-15T11:22:33Z h a - - - pri too large' },
    malformed: true,
  },
  {
    source: 'RFC 5424 with a bad timestamp',
    line: '<13>1 not-a-timestamp h a - - - bad 5424 header',
    want: { format: 'RFC3164', priority: '13', timestamp: '', message: '1 not-a-timestamp h a - - - bad 5424 header' },
    malformed: true,
  },
  {
    source: 'RFC 5424 with February 30',
    line: '<13>1 2024-02-30T11:22:33Z h a - - - no such day',
    want: { format: 'RFC3164' },
    malformed: true,
  },
  {
    source: 'RFC 5424 with two spaces',
    line: '<13>1 2024-03-15T11:22:33Z  h a - - - empty hostname field',
    want: { format: 'RFC3164' },
    malformed: true,
  },
  {
    source: 'RFC 5424 with unclosed SD',
    line: '<13>1 2024-03-15T11:22:33Z h a - - [unclosed sd',
    want: { format: 'RFC3164' },
    malformed: true,
  },
  {
    source: 'unknown month',
    line: '<13>Foo 15 11:22:33 host app: unknown month',
    want: { timestamp: '', message: 'Foo 15 11:22:33 host app: unknown month' },
    malformed: true,
  },
  { source: 'truncated PRI', line: '<13', want: { priority: '13', message: '<13' }, malformed: true },
  { source: 'empty PRI', line: '<>', want: { message: '<>' }, malformed: true },
  { source: 'letters as PRI', line: '<abc>text', want: { priority: '13', message: '<abc>text' }, malformed: true },
  { source: 'Latin-1 text', line: '\u00ff\u00fe binary-ish text', want: { priority: '13' }, malformed: true },
  {
    source: 'empty pid brackets',
    line: '<13>Mar 15 11:22:33 host app[]: empty pid brackets',
    want: { appname: 'app', procid: '', message: 'empty pid brackets' },
  },
];
