// blobs.mjs: the Azure side of deltad's Azure tests, done with Microsoft's own SDK
// (@azure/storage-blob) against Azurite's development account devstoreaccount1:
//   node blobs.mjs container ENDPOINT NAME             creates a container
//   node blobs.mjs upload ENDPOINT CONTAINER PREFIX NAME=DIR...
//       uploads every file under each DIR as block blob PREFIX/NAME/<relative path>;
//       prints "UPLOADED <count>"
//   node blobs.mjs sas ENDPOINT CONTAINER PERMS HOURS  prints a container SAS (no '?')
//   node blobs.mjs many ENDPOINT CONTAINER PREFIX COUNT
//       uploads COUNT one-byte blobs PREFIX/00000.bin... (listings that need many pages)
// ENDPOINT is the blob base URL, e.g. http://127.0.0.1:10000/devstoreaccount1.
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const require = createRequire(import.meta.url);
const {
  BlobServiceClient, StorageSharedKeyCredential, ContainerSASPermissions,
  generateBlobSASQueryParameters,
} = require('@azure/storage-blob');

// The emulator's published development account (not a secret).
const ACCOUNT = 'devstoreaccount1';
const KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const cred = new StorageSharedKeyCredential(ACCOUNT, KEY);

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (e.isFile()) yield p;
  }
}

const [cmd, endpoint, ...rest] = process.argv.slice(2);
const service = endpoint ? new BlobServiceClient(endpoint, cred) : null;
if (cmd === 'container') {
  await service.getContainerClient(rest[0]).createIfNotExists();
} else if (cmd === 'upload') {
  const [container, prefix, ...pairs] = rest;
  const cc = service.getContainerClient(container);
  await cc.createIfNotExists();
  let n = 0;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq), dir = pair.slice(eq + 1);
    for (const f of files(dir)) {
      const rel = relative(dir, f).split(sep).join('/');
      const data = readFileSync(f);
      await cc.getBlockBlobClient(`${prefix}/${name}/${rel}`).upload(data, data.length);
      n++;
    }
  }
  console.log(`UPLOADED ${n}`);
} else if (cmd === 'sas') {
  const [container, perms, hours] = rest;
  const q = generateBlobSASQueryParameters({
    containerName: container,
    permissions: ContainerSASPermissions.parse(perms),
    startsOn: new Date(Date.now() - 5 * 60 * 1000),
    expiresOn: new Date(Date.now() + Number(hours) * 3600 * 1000),
  }, cred);
  console.log(q.toString());
} else if (cmd === 'many') {
  const [container, prefix, count] = rest;
  const cc = service.getContainerClient(container);
  await cc.createIfNotExists();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < Number(count); i = next++) {
      const name = `${prefix}/${String(i).padStart(5, '0')}.bin`;
      await cc.getBlockBlobClient(name).upload('x', 1);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  console.log(`UPLOADED ${count}`);
} else {
  console.error('usage: node blobs.mjs container|upload|sas|many ENDPOINT ...');
  process.exit(2);
}
