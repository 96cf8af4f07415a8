/** The hive connection options of `hivenode send` and `hivenode template`, apart from the commands so the command line's parser reads them without loading the NATS client. */
/** The yargs options of the hive connection, shared by `send` and `template`; each falls back to its parameter in the environment. */
export const HIVE_OPTIONS = {
  server: { type: 'string', describe: 'nats://host:port or tls://host:port (default: SERVERHOST)' },
  auth: {
    type: 'string',
    describe: 'token, user:password, .creds or nkey seed file, file://path (default: SERVERAUTH)',
  },
  ca: { type: 'string', describe: 'CA certificate file the hive server must be signed by (default: SERVERCA)' },
  cert: { type: 'string', describe: 'client certificate file (default: SERVERCERT)' },
  key: { type: 'string', describe: 'client key file or file://path (default: SERVERKEY)' },
} as const;
