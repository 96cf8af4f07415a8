/**
 * NATS decentralized credentials for the tests, made without `nsc`: an operator, an account and its
 * users as nkeys and JWTs (version 2 claims, ed25519-nkey signatures), and the .creds text a user
 * connects with. Enough for a nats-server in operator mode with a memory resolver (server.ts).
 */
import { createHash } from 'node:crypto';
import { nkeys } from '@nats-io/transport-node';

type KeyPair = ReturnType<typeof nkeys.createUser>;

const encoder = new TextEncoder();
const b64url = (data: Uint8Array | string): string =>
  Buffer.from(typeof data === 'string' ? encoder.encode(data) : data).toString('base64url');

/** A signed JWT of `claims` for `subject`, issued by `issuer`. */
function sign(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const body: Record<string, unknown> = {
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    nats: { ...nats, version: 2 },
  };
  // the claims' id: unique per claims (a hash of them); the server reads it but does not recompute it
  body.jti = createHash('sha256').update(JSON.stringify(body)).digest('base64url');
  const unsigned = `${b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))}.${b64url(JSON.stringify(body))}`;
  return `${unsigned}.${b64url(issuer.sign(encoder.encode(unsigned)))}`;
}

export interface Operator {
  operatorJwt: string;
  account: { publicKey: string; jwt: string };
  /** The .creds text of a new user of the account. */
  userCreds(name: string): string;
}

const UNLIMITED = { subs: -1, data: -1, payload: -1 };

/** An operator with one account; `userCreds` makes users of it. */
export function makeOperator(): Operator {
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  const operatorJwt = sign(operator, operator.getPublicKey(), 'hivenode-test', { type: 'operator' });
  const accountJwt = sign(operator, account.getPublicKey(), 'hive', {
    type: 'account',
    limits: { ...UNLIMITED, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 },
    default_permissions: { pub: {}, sub: {} },
  });
  return {
    operatorJwt,
    account: { publicKey: account.getPublicKey(), jwt: accountJwt },
    userCreds(name) {
      const user = nkeys.createUser();
      const jwt = sign(account, user.getPublicKey(), name, { type: 'user', pub: {}, sub: {}, ...UNLIMITED });
      const seed = new TextDecoder().decode(user.getSeed());
      return `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`;
    },
  };
}
