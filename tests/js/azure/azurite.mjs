// azurite.mjs: starts Azurite's Blob service (Microsoft's Azure Storage emulator; it checks
// Shared Key and SAS signatures) on 127.0.0.1 with a free port, keeping its data under the
// directory given as argv[2] (created if need be). Prints "PORT <n>" once listening and runs until killed.
// With AZURITE_CERT and AZURITE_KEY (PEM files) it serves HTTPS, and with AZURITE_OAUTH=basic
// it also accepts OAuth bearer tokens (checking their issuer, audience and lifetime) and
// answers Get User Delegation Key.
// Telemetry is never initialised, so nothing leaves the machine. Used by deltad's Azure tests.
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const BlobConfiguration = require('azurite/dist/src/blob/BlobConfiguration.js').default;
const BlobServer = require('azurite/dist/src/blob/BlobServer.js').default;

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node azurite.mjs DIR');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const persistence = [{ locationId: 'Default', locationPath: join(dir, '__blobstorage__'),
                       maxConcurrency: 1 }];
const config = new BlobConfiguration(
  '127.0.0.1', 0, undefined,
  join(dir, '__azurite_db_blob__.json'), join(dir, '__azurite_db_blob_extent__.json'),
  persistence, false /* access log */, undefined, false /* debug log */, undefined,
  false /* loose */, false /* skipApiVersionCheck */,
  process.env.AZURITE_CERT || '', process.env.AZURITE_KEY || '', '' /* pwd */,
  process.env.AZURITE_OAUTH || undefined);
const server = new BlobServer(config);
await server.start();
const addr = server.httpServer.address();
console.log(`PORT ${addr.port}`);
const stop = () => server.close().then(() => process.exit(0));
process.once('SIGTERM', stop).once('SIGINT', stop);
