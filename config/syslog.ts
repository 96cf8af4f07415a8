/** Syslog service parameters, transcribed from spec §2.6. */
import { GENERAL_PARAMS, INPUT_PARAMS, OUTPUT_PARAMS } from './common.js';
import type { ParamTable } from './params.js';

const SYSLOG_OWN = [
  { name: 'Class', type: 'string', default: 'syslog', description: 'Class of messages created from received syslog messages.' },
  { name: 'Operation', type: 'string', default: 'message', description: 'Operation of those messages.' },
  { name: 'IP', type: 'string', default: '0.0.0.0', description: 'Listen address of the receiver.' },
  { name: 'Port', type: 'int', default: '10514', min: 0, max: 65535, description: 'Listen port of the receiver.' },
  { name: 'TCP', type: 'bool', default: 'false', description: 'Receive TCP syslog (UDP and TCP may both be on).' },
  { name: 'UDP', type: 'bool', default: 'false', description: 'Receive UDP syslog.' },
  { name: 'Format', type: 'enum', default: 'RFC3164', values: ['RFC3164', 'RFC5424', 'RFC6587', 'auto'], description: "Expected incoming format: 'RFC3164', 'RFC5424' or 'RFC6587'; or 'auto' (beyond the spec): per message RFC 5424 when a version follows the PRI, RFC 3164 otherwise. Every message is decoded whatever its format; one not of the expected format is counted invalid and still forwarded." },
  { name: 'DecodeCEF', type: 'bool', default: 'false', description: 'Try to decode CEF messages.' },
  { name: 'RemoteIP', type: 'string', description: 'Address of the target syslog server for sending.' },
  { name: 'RemotePort', type: 'int', default: '10514', min: 1, max: 65535, description: 'Port of the target syslog server.' },
  { name: 'SendTag', type: 'string', default: 'platform', description: 'Syslog tag on sent messages.' },
  { name: 'SendTCP', type: 'bool', default: 'false', description: 'Send over TCP; when true, TCP is used even if SendUDP is true.' },
  { name: 'SendUDP', type: 'bool', default: 'false', description: 'Send over UDP.' },
  { name: 'SendJSON', type: 'bool', default: 'false', description: 'When true, all Data is sent as JSON.' },
  { name: 'SendFormat', type: 'enum', default: 'RFC3164', values: ['RFC3164', 'RFC5424'], beyondSpec: true, description: 'Format of sent messages.' },
  { name: 'SendFraming', type: 'enum', default: 'octet-counting', values: ['octet-counting', 'lf'], beyondSpec: true, description: "TCP framing of sent messages (RFC 6587); with 'lf' newlines inside a message are sent as spaces so they never split it." },
  { name: 'SendTLS', type: 'bool', default: 'false', beyondSpec: true, description: 'Send over TLS (TCP).' },
  { name: 'SendBuffer', type: 'int', default: '10000', min: 0, beyondSpec: true, description: 'Messages kept while the TCP connection is down; beyond it they are dropped and counted.' },
  { name: 'MaxMessageBytes', type: 'int', default: '65536', min: 480, beyondSpec: true, description: 'Largest received message (UDP datagram or TCP frame); a larger TCP frame closes the connection.' },
  { name: 'MaxConnections', type: 'int', default: '1000', min: 1, beyondSpec: true, description: 'TCP connections the receiver accepts at once.' },
] as const satisfies ParamTable;

export const SYSLOG_PARAMS = [...GENERAL_PARAMS, ...INPUT_PARAMS, ...OUTPUT_PARAMS, ...SYSLOG_OWN] as const satisfies ParamTable;
