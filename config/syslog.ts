/** Syslog service parameters, as the service specification lists them; README, Parameter reference prints them (and README, The syslog service says what they do). */
import { GENERAL_PARAMS, INPUT_PARAMS, OUTPUT_PARAMS } from './common.js';
import type { ParamTable } from './params.js';
import { TLS_PARAMS } from './tls.js';

// a parameter table: one parameter a line, as README prints it (the formatter leaves it so)
// prettier-ignore
const SYSLOG_OWN = [
  { name: 'Class', type: 'string', default: 'syslog', description: 'Class of messages created from received syslog messages.' },
  { name: 'Operation', type: 'string', default: 'message', description: 'Operation of those messages.' },
  { name: 'IP', type: 'string', default: '0.0.0.0', description: 'Listen address of the receiver.' },
  { name: 'Port', type: 'int', default: '10514', min: 0, max: 65535, description: 'Listen port of the receiver (UDP, TCP, and TCP with TLS; 6514 is the IANA port of syslog over TLS).' },
  { name: 'TCP', type: 'bool', default: 'false', description: 'Receive TCP syslog (UDP and TCP may both be on).' },
  { name: 'UDP', type: 'bool', default: 'false', description: 'Receive UDP syslog.' },
  { name: 'TLS', type: 'bool', default: 'false', beyondSpec: true, description: 'Receive syslog over TLS (RFC 5425) on Port instead of plain TCP, with TLSCert and TLSKey; frames octet-counted as the RFC says, LF-terminated ones accepted too (rsyslog sends those by default).' },
  { name: 'TCPAck', type: 'bool', default: 'false', beyondSpec: true, description: "With TCP or TLS: each message is handed over with acknowledged delivery to OUTPUTCHANNEL (a refusal that may pass is tried again), and a connection is not read while RELPWindow of its messages wait for the hive: backpressure through TCP's window instead of drops. The sender is never told (plain TCP has no acknowledgement): a message in hand-over when the node dies is lost; RELP closes that gap." },
  { name: 'RELP', type: 'bool', default: 'false', beyondSpec: true, description: "Receive RELP (rsyslog's Reliable Event Logging Protocol, omrelp) on RELPPort, over TLS when TLS is true: each message is answered 200 only once OUTPUTCHANNEL acknowledged it (a durable queue: stored); a refusal that may pass is tried again while the sender waits, so nothing is dropped." },
  { name: 'RELPPort', type: 'int', default: '2514', min: 0, max: 65535, beyondSpec: true, description: 'Listen port of the RELP receiver (2514, as rsyslog\'s examples use).' },
  { name: 'RELPWindow', type: 'int', default: '128', min: 1, max: 100000, beyondSpec: true, description: 'Messages in acknowledged hand-over at once per receiver connection, RELP or TCPAck (past it the connection is not read: the sender slows down), and RELP frames unanswered at once for the RELP sender (past it messages wait, up to SendBuffer).' },
  ...TLS_PARAMS,
  { name: 'AllowFrom', type: 'string', default: '', beyondSpec: true, description: "Sources the receiver accepts: comma-separated CIDRs or addresses, IPv4 and IPv6 ('10.0.0.0/8, ::1'); '' accepts all. Others are dropped (a TCP or TLS connection is closed at accept, before any handshake) and counted per source." },
  { name: 'SourceRate', type: 'string', default: '', beyondSpec: true, description: "Per-source limits: 'cidr=N/s;cidr=N/s' ('10.0.0.0/8=500/s; 0.0.0.0/0=2000/s'). Each source address takes the first rule holding it and may send N messages per second (bursts of N); others are not limited. Over UDP and TCP a message over the limit is dropped, counted in rateLimited and per source in rateLimitedFrom; over RELP and TCPAck it waits instead (rateDelayed)." },
  { name: 'Format', type: 'enum', default: 'RFC3164', values: ['RFC3164', 'RFC5424', 'RFC6587', 'auto'], description: "Expected incoming format: 'RFC3164', 'RFC5424' or 'RFC6587'; or 'auto' (beyond the spec): per message RFC 5424 when a version follows the PRI, RFC 3164 otherwise. Every message is decoded whatever its format; one not of the expected format is counted invalid and still forwarded." },
  { name: 'DecodeCEF', type: 'bool', default: 'false', description: 'Try to decode CEF messages.' },
  { name: 'RemoteIP', type: 'string', description: 'Address of the target syslog server for sending.' },
  { name: 'RemotePort', type: 'int', default: '10514', min: 1, max: 65535, description: 'Port of the target syslog server.' },
  { name: 'SendTag', type: 'string', default: 'platform', description: 'Syslog tag on sent messages.' },
  { name: 'SendTCP', type: 'bool', default: 'false', description: 'Send over TCP; when true, TCP is used even if SendUDP is true.' },
  { name: 'SendUDP', type: 'bool', default: 'false', description: 'Send over UDP.' },
  { name: 'SendJSON', type: 'bool', default: 'false', description: 'When true, all Data is sent as JSON.' },
  { name: 'SendFormat', type: 'enum', default: 'RFC3164', values: ['RFC3164', 'RFC5424'], beyondSpec: true, description: 'Format of sent messages.' },
  { name: 'SendFraming', type: 'enum', default: 'octet-counting', values: ['octet-counting', 'lf'], beyondSpec: true, description: "TCP framing of sent messages (RFC 6587; TLS is always octet-counted, 'lf' with SendTLS is a start error); with 'lf' newlines inside a message are sent as spaces so they never split it." },
  { name: 'SendRELP', type: 'bool', default: 'false', beyondSpec: true, description: "Send over RELP to RemoteIP:RemotePort (rsyslog imrelp; over TLS with SendTLS; wins over SendTCP and SendUDP): each message is kept until the server answers 200, resent after a reconnect, and the hive's caller is answered only then." },
  { name: 'SendTLS', type: 'bool', default: 'false', beyondSpec: true, description: 'Send over TLS (RFC 5425: TCP, octet-counted); the certificate of RemoteIP is verified against RemoteCA and must name RemoteIP (host name or IP address).' },
  { name: 'RemoteCA', type: 'string', default: '', beyondSpec: true, watchedFile: true, description: "CA certificates (PEM) that the syslog server's certificate must chain to with SendTLS: a path, 'file://<path>' or PEM text; '' trusts the system CAs." },
  { name: 'SendCert', type: 'string', default: '', beyondSpec: true, watchedFile: true, description: "Client certificate (PEM) shown to the syslog server with SendTLS, for servers that require one: a path, 'file://<path>' or PEM text." },
  { name: 'SendKey', type: 'string', default: '', secret: true, watchedFile: true, beyondSpec: true, description: "Private key of SendCert (PEM, unencrypted): a path, 'file://<path>' or PEM text." },
  { name: 'SendBuffer', type: 'int', default: '10000', min: 0, beyondSpec: true, description: 'Messages kept while the TCP connection is down; beyond it they are dropped and counted.' },
  { name: 'MaxMessageBytes', type: 'int', default: '65536', min: 480, beyondSpec: true, description: 'Largest received message (UDP datagram or TCP frame); a larger TCP frame closes the connection.' },
  { name: 'MaxConnections', type: 'int', default: '1000', min: 1, beyondSpec: true, description: 'TCP connections the receiver accepts at once.' },
] as const satisfies ParamTable;

export const SYSLOG_PARAMS = [
  ...GENERAL_PARAMS,
  ...INPUT_PARAMS,
  ...OUTPUT_PARAMS,
  ...SYSLOG_OWN,
] as const satisfies ParamTable;
