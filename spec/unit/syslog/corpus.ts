/**
 * Real-world syslog lines with the fields they must decode to (a subset of the Data keys each).
 * Received at NOW (2024-03-15T12:00:00 local time) unless a line carries its own year.
 */
export const NOW = new Date(2024, 2, 15, 12, 0, 0);

export type Expect = Partial<Record<'facility' | 'severity' | 'priority' | 'timestamp' | 'hostname' | 'appname' | 'procid' | 'msgid' | 'message' | 'structureddata' | 'format', string>> & { cef?: Record<string, string> };

const iso = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms = 0): string => new Date(y, mo - 1, d, h, mi, s, ms).toISOString();

export const CORPUS: Array<[string, Expect]> = [
  // RFC 5424 (RFC examples and rsyslog RSYSLOG_SyslogProtocol23Format)
  ['<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF\'su root\' failed for lonvick on /dev/pts/8', { facility: 'auth', severity: 'critical', timestamp: '2003-10-11T22:14:15.003Z', hostname: 'mymachine.example.com', appname: 'su', msgid: 'ID47', message: "'su root' failed for lonvick on /dev/pts/8", format: 'RFC5424' }],
  ['<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It\'s time to make the do-nuts.', { facility: 'local4', severity: 'notice', timestamp: '2003-08-24T12:14:15.000Z', hostname: '192.0.2.1', appname: 'myproc', procid: '8710', message: "%% It's time to make the do-nuts." }],
  ['<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] BOMAn application event log entry', { appname: 'evntslog', structureddata: '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"]', message: 'BOMAn application event log entry' }],
  ['<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3"][examplePriority@32473 class="high"]', { structureddata: '[exampleSDID@32473 iut="3"][examplePriority@32473 class="high"]', message: '' }],
  ['<14>1 - - - - - -', { severity: 'informational', facility: 'user', timestamp: '', hostname: '', appname: '', message: '' }],
  ['<13>1 2024-03-15T10:00:00+01:00 host app 123 MSG [sd a="x\\"y" b="z\\]w" c="\\\\"] with escapes', { timestamp: '2024-03-15T09:00:00.000Z', structureddata: '[sd a="x\\"y" b="z\\]w" c="\\\\"]', message: 'with escapes' }],
  ['<0>1 2024-03-15T10:00:00Z h a p m - emergency', { facility: 'kern', severity: 'emergency', priority: '0' }],
  ['<191>1 2024-03-15T10:00:00Z h a p m - lowest', { facility: 'local7', severity: 'debug', priority: '191' }],
  ['<30>1 2024-03-15T10:00:00.123456Z web01 nginx 4242 ACCESS [meta@1 ip="10.0.0.1"] GET /index.html 200', { hostname: 'web01', appname: 'nginx', procid: '4242', msgid: 'ACCESS', message: 'GET /index.html 200', facility: 'daemon', severity: 'informational' }],
  ['<134>1 2024-03-15T10:00:00Z fw1 kernel - - - multi word message with = and [brackets]', { message: 'multi word message with = and [brackets]' }],
  ['<13>1 2024-03-15T10:00:00Z h a - - - ünïcödé message ✓', { message: 'ünïcödé message ✓' }],
  ['<13>1 2024-03-15T10:00:00Z h a - - - \uFEFFbom then text', { message: 'bom then text' }],
  // rsyslog RSYSLOG_ForwardFormat / TraditionalForwardFormat
  ['<30>2024-03-15T11:22:33.456+00:00 server1 systemd[1]: Started Session 42 of user root.', { timestamp: '2024-03-15T11:22:33.456Z', hostname: 'server1', appname: 'systemd', procid: '1', message: 'Started Session 42 of user root.', format: 'RFC3164' }],
  ['<86>2024-03-15T11:22:33+01:00 db2 sshd[2222]: Accepted publickey for deploy from 10.1.1.1', { timestamp: '2024-03-15T10:22:33.000Z', hostname: 'db2', appname: 'sshd', procid: '2222', facility: 'authpriv', severity: 'informational' }],
  ['<30>Mar 15 11:22:33 server1 systemd[1]: Started Daily apt activities.', { timestamp: iso(2024, 3, 15, 11, 22, 33), hostname: 'server1', appname: 'systemd', procid: '1', message: 'Started Daily apt activities.' }],
  ['<13>Mar  5 01:02:03 host logger: single digit day', { timestamp: iso(2024, 3, 5, 1, 2, 3), hostname: 'host', appname: 'logger', message: 'single digit day' }],
  ['<13>Mar 15 23:59:59 host app: 24-hour clock', { timestamp: iso(2024, 3, 15, 23, 59, 59), message: '24-hour clock' }],
  ['<13>Dec 31 23:59:59 host app: from last year', { timestamp: iso(2023, 12, 31, 23, 59, 59), message: 'from last year' }],
  ['<13>Feb 29 12:00:00 host app: leap day', { timestamp: iso(2024, 2, 29, 12, 0, 0) }],
  ['<38>Mar 15 11:22:33 myhost sudo:   alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/bin/ls', { appname: 'sudo', procid: '', facility: 'auth', severity: 'informational', message: '  alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/bin/ls' }],
  ['<78>Mar 15 11:22:01 host CRON[12345]: (root) CMD (run-parts /etc/cron.hourly)', { facility: 'cron', appname: 'CRON', procid: '12345' }],
  ['<11>Mar 15 11:22:01 host app[1]: error text', { severity: 'error', facility: 'user' }],
  ['<12>Mar 15 11:22:01 host app[1]: warning text', { severity: 'warning' }],
  ['<15>Mar 15 11:22:01 host app[1]: debug text', { severity: 'debug' }],
  ['<10>Mar 15 11:22:01 host app[1]: critical text', { severity: 'critical' }],
  // logger (util-linux) default output forms
  ['<13>Mar 15 11:22:33 myhost alice: hello from logger', { hostname: 'myhost', appname: 'alice', message: 'hello from logger' }],
  ['<13>Mar 15 11:22:33 myhost mytag[999]: tagged with pid', { appname: 'mytag', procid: '999', message: 'tagged with pid' }],
  ['<13>1 2024-03-15T11:22:33.123456+00:00 myhost alice - - [timeQuality tzKnown="1" isSynced="0"] logger rfc5424', { appname: 'alice', message: 'logger rfc5424', structureddata: '[timeQuality tzKnown="1" isSynced="0"]' }],
  // no hostname, no timestamp, no PRI
  ['<13>Mar 15 11:22:33 app[5]: no hostname here', { hostname: '', appname: 'app', procid: '5', message: 'no hostname here' }],
  ['<13>just a message', { timestamp: '', hostname: '', appname: '', message: 'just a message' }],
  ['no pri at all', { priority: '13', facility: 'user', severity: 'notice', message: 'no pri at all' }],
  ['<13>tag: message without timestamp', { appname: 'tag', message: 'message without timestamp' }],
  ['<13>tag[77]: with pid, without timestamp', { appname: 'tag', procid: '77' }],
  ['<13>Mar 15 11:22:33 host message without a tag', { hostname: 'host', appname: '', message: 'message without a tag' }],
  // Cisco IOS / ASA / NX-OS
  ['<189>123: *Mar  1 00:00:04.123 UTC: %SYS-5-CONFIG_I: Configured from console by vty0 (10.0.0.5)', { facility: 'local7', severity: 'notice', timestamp: new Date(Date.UTC(2024, 2, 1, 0, 0, 4, 123)).toISOString(), message: '%SYS-5-CONFIG_I: Configured from console by vty0 (10.0.0.5)' }],
  ['<189>45: Mar 15 11:22:33.456: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up', { message: '%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up' }],
  ['<166>Mar 15 2024 11:22:33: %ASA-6-302013: Built outbound TCP connection 1 for outside:1.2.3.4/443', { timestamp: iso(2024, 3, 15, 11, 22, 33), facility: 'local4', severity: 'informational', message: '%ASA-6-302013: Built outbound TCP connection 1 for outside:1.2.3.4/443' }],
  ['<166>Mar 15 2024 11:22:33 asa01 : %ASA-6-302014: Teardown TCP connection', { hostname: 'asa01' }],
  ['<187>2024 Mar 15 11:22:33 nxos %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up', { facility: 'local7', severity: 'error' }],
  // Juniper, journald forwarding, misc
  ['<28>Mar 15 11:22:33 srx1 RT_FLOW: RT_FLOW_SESSION_CREATE: session created 10.0.0.1/1->10.0.0.2/2', { hostname: 'srx1', appname: 'RT_FLOW', message: 'RT_FLOW_SESSION_CREATE: session created 10.0.0.1/1->10.0.0.2/2' }],
  ['<165>1 2024-03-15T11:22:33.000Z mx1 mgd 3333 UI_COMMIT [junos@2636.1.1.1.2.18 username="admin"] User committed', { appname: 'mgd', msgid: 'UI_COMMIT', message: 'User committed' }],
  ['<30>Mar 15 11:22:33 host kernel: [12345.678901] usb 1-1: new high-speed USB device', { appname: 'kernel', message: '[12345.678901] usb 1-1: new high-speed USB device' }],
  ['<30>Mar 15 11:22:33 host dockerd[800]: time="2024-03-15T11:22:33Z" level=info msg="ok"', { appname: 'dockerd', procid: '800', message: 'time="2024-03-15T11:22:33Z" level=info msg="ok"' }],
  ['<13>Mar 15 11:22:33 host app: message with trailing spaces   ', { message: 'message with trailing spaces   ' }],
  ['<13>Mar 15 11:22:33 host app: tabs\tinside\tmessage', { message: 'tabs\tinside\tmessage' }],
  ['<13>Mar 15 11:22:33 host app: colons: in: message', { appname: 'app', message: 'colons: in: message' }],
  ['<13>Mar 15 11:22:33 host app[1]: [brackets] at start', { message: '[brackets] at start' }],
  ['<13>Mar 15 11:22:33.123456 host app: fractional bsd', { timestamp: iso(2024, 3, 15, 11, 22, 33, 123) }],
  ['<13>2024-03-15T11:22:33Z host app: iso zulu', { timestamp: '2024-03-15T11:22:33.000Z', hostname: 'host' }],
  ['<13>2024-03-15T11:22:33.123456789+02:00 host app: nanoseconds', { timestamp: '2024-03-15T09:22:33.123Z' }],
  // CEF with and without a syslog envelope
  ['CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232', { format: 'CEF', cef: { version: '0', vendor: 'Security', product: 'threatmanager', device_version: '1.0', signature_id: '100', name: 'worm successfully stopped', severity: '10', src: '10.0.0.1', dst: '2.1.2.2', spt: '1232' } }],
  ['<134>Mar 15 11:22:33 host CEF:0|Vendor|Prod|2.0|sig1|Name with \\| pipe|5|msg=hello world act=blocked', { cef: { name: 'Name with | pipe', msg: 'hello world', act: 'blocked' } }],
  ['<134>1 2024-03-15T11:22:33Z host app - - - CEF:1|V|P|1|id|n|3|cs1=a\\=b cs2=line\\nbreak cs3=back\\\\slash', { cef: { version: '1', cs1: 'a=b', cs2: 'line\nbreak', cs3: 'back\\slash' } }],
  ['CEF:0|V\\\\x|P|1|id|name|Low|', { cef: { vendor: 'V\\x', severity: 'Low' } }],
  ['CEF:0|V|P|1|id|name|7|request=https://example.com/a?b=c&d=e suser=bob smith', { cef: { request: 'https://example.com/a?b=c&d=e', suser: 'bob smith' } }],
  // malformed but still forwarded leniently (garbage is a message)
  ['<999>1 2024-03-15T11:22:33Z h a - - - pri too large', { format: 'RFC3164', priority: '13', message: '<999>1 2024-03-15T11:22:33Z h a - - - pri too large' }],
  ['<13>1 not-a-timestamp h a - - - bad 5424 header', { format: 'RFC3164' }],
  ['<13>Foo 15 11:22:33 host app: unknown month', { timestamp: '', message: 'Foo 15 11:22:33 host app: unknown month' }],
  ['<13', { message: '<13' }],
  ['<>', { message: '<>' }],
  ['\u00ff\u00fe binary-ish text', { priority: '13' }],
  ['<13>1 2024-03-15T11:22:33Z h a - - [unclosed sd', { format: 'RFC3164' }],
  ['<13>Mar 15 11:22:33 host app[]: empty pid brackets', { priority: '13' }],
];
