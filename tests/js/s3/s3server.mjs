// s3server.mjs: starts s3rver (a local S3-compatible server) on 127.0.0.1 with a free port,
// storing objects under the directory given as argv[2]; prints "PORT <n>" once listening
// and runs until killed. Used by deltad's S3 integration tests. Run node with
// --openssl-legacy-provider: s3rver's listing continuation tokens use DES.
import S3rver from 's3rver';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node s3server.mjs DIR');
  process.exit(2);
}
const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true });
const { port } = await server.run();
console.log(`PORT ${port}`);
