/**
 * A certificate authority of the test's own and a server certificate it signed, made with openssl:
 * what the container test's proxy serves (CEREMONY_CERTIFICATE=files) and what its clients trust
 * (NODE_EXTRA_CA_CERTS for the terminal contributor, `ca` for the test's own requests). P-256
 * keys, valid for two days, for the names given (DNS names and IP addresses).
 */
import { execFile } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCertificate {
  /** The CA's certificate (PEM file): what clients trust. */
  caFile: string;
  ca: string;
  /** The folder holding certificate.pem (leaf, then the CA) and key.pem, as deploy/proxy/Caddyfile reads them. */
  folder: string;
}

export async function makeTestCertificate(folder: string, names: string[]): Promise<TestCertificate> {
  const file = (name: string) => path.join(folder, name);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run(
    'openssl',
    ['req', '-x509', ...ecKey, '-keyout', file('ca-key.pem'), '-out', file('ca.pem')].concat([
      '-days',
      '2',
      '-subj',
      '/CN=ceremony container test CA',
    ]),
  );
  await run('openssl', [
    'req',
    ...ecKey,
    '-keyout',
    file('key.pem'),
    '-out',
    file('leaf.csr'),
    '-subj',
    `/CN=${names[0]}`,
  ]);
  const san = names.map((name) => (isIP(name) ? `IP:${name}` : `DNS:${name}`)).join(',');
  await writeFile(
    file('leaf.ext'),
    `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`,
  );
  await run(
    'openssl',
    ['x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca-key.pem')].concat([
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      file('leaf.ext'),
      '-out',
      file('leaf.pem'),
    ]),
  );
  const ca = await readFile(file('ca.pem'), 'utf8');
  await writeFile(file('certificate.pem'), (await readFile(file('leaf.pem'), 'utf8')) + ca);
  // The proxy runs as its own user: it reads the key through a read-only mount.
  await chmod(file('key.pem'), 0o644);
  await chmod(folder, 0o755);
  return { caFile: file('ca.pem'), ca, folder };
}
