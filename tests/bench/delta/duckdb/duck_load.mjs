// duck_load.mjs: the DuckDB side of compare_duckdb.sh. Reads a Delta checkpoint's add
// columns (and optionally the JSON commits after it) with @duckdb/node-api and prints one
// line of key=value figures for the shell script to parse.
//
//   node duck_load.mjs MODE CHECKPOINT [COMMIT.json ...]
//   MODE: startup     only create the instance, connect and run SELECT 1
//         ckpt        the checkpoint's add columns named in the issue
//         ckpt+json   the same plus the add actions of the given JSON commits (UNION ALL)
//         ckpt-wide   every add column deltad's replay projects (adds stats, tags, row ids)
//         issue       the aggregate of issue #12: count(*), sum(add.size), count(DISTINCT
//                     add.path), sum(length(add.stats)), sum(cardinality(add.partitionValues))
//         write OUT   COPY the checkpoint's rows TO OUT (a DuckDB-written checkpoint, snappy)
// DUCK_RESULT (environment) says how rows are consumed:
//         chunks (default)  runAndReadAll: every result chunk is held in memory (DuckDB's
//                           native vectors, referenced from JS) until the rows are counted
//         stream            fetch chunk by chunk, count rows, drop each chunk
//         js                runAndReadAll, then convert every row into JS values
// DUCK_THREADS (environment): SET threads to this (default: DuckDB's own, the core count).
import { DuckDBInstance } from '@duckdb/node-api';

const ADD_COLS = 'add.path, add.size, add.partitionValues, add.modificationTime, ' +
  'add.dataChange, add.deletionVector';
const WIDE_COLS = ADD_COLS + ', add.stats, add.tags, add.baseRowId, add.defaultRowCommitVersion';
// Explicit JSON column types so commit adds line up with the checkpoint's Parquet types.
const DV_TYPE = 'STRUCT(storageType VARCHAR, pathOrInlineDv VARCHAR, "offset" INTEGER, ' +
  'sizeInBytes INTEGER, cardinality BIGINT, maxRowIndex BIGINT)';
const JSON_ADD = `STRUCT(path VARCHAR, partitionValues MAP(VARCHAR, VARCHAR), size BIGINT, ` +
  `modificationTime BIGINT, dataChange BOOLEAN, deletionVector ${DV_TYPE})`;

const sq = (s) => `'${s.replaceAll("'", "''")}'`;

function buildSql(mode, ckpt, commits) {
  const fromCkpt = `FROM read_parquet(${sq(ckpt)}) WHERE add IS NOT NULL`;
  if (mode === 'ckpt') return `SELECT ${ADD_COLS} ${fromCkpt}`;
  if (mode === 'ckpt-wide') return `SELECT ${WIDE_COLS} ${fromCkpt}`;
  if (mode === 'issue')
    return 'SELECT count(*), sum(add.size), count(DISTINCT add.path), sum(length(add.stats)), ' +
      `sum(cardinality(add.partitionValues)) ${fromCkpt}`;
  if (mode === 'ckpt+json') {
    if (commits.length === 0) throw new Error('ckpt+json needs commit files');
    const list = '[' + commits.map(sq).join(', ') + ']';
    return `SELECT ${ADD_COLS} ${fromCkpt} UNION ALL SELECT ${ADD_COLS} FROM read_json(${list}, ` +
      `format = 'newline_delimited', columns = {add: ${sq(JSON_ADD)}}) WHERE add IS NOT NULL`;
  }
  throw new Error(`unknown mode ${mode}`);
}

async function consume(conn, sql, how) {
  if (how === 'stream') {
    const result = await conn.stream(sql);
    let rows = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      rows += chunk.rowCount;
    }
    return rows;
  }
  const reader = await conn.runAndReadAll(sql);
  if (how === 'js') {
    const rows = reader.getRowsJS();
    return rows.length;
  }
  return reader.currentRowCount;
}

async function main() {
  const [mode, ckpt, ...commits] = process.argv.slice(2);
  const how = process.env.DUCK_RESULT || 'chunks';
  if (!mode || (mode !== 'startup' && !ckpt)) {
    console.error('usage: node duck_load.mjs startup|ckpt|ckpt+json|ckpt-wide CHECKPOINT [JSON...]');
    process.exit(2);
  }
  const t0 = performance.now();
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  if (process.env.DUCK_THREADS) await conn.run(`SET threads = ${Number(process.env.DUCK_THREADS)}`);
  await conn.runAndReadAll('SELECT 1');
  const t1 = performance.now();
  const ru1 = process.resourceUsage();
  const rssInitKb = Math.round(process.memoryUsage().rss / 1024);
  let rows = 0;
  if (mode === 'write') {
    await conn.run(`COPY (SELECT * FROM read_parquet(${sq(ckpt)})) TO ${sq(commits[0])} ` +
      "(FORMAT parquet, COMPRESSION snappy)");
  } else if (mode === 'issue') {
    const r = await conn.runAndReadAll(buildSql(mode, ckpt, commits));
    const v = r.getRows()[0];
    rows = Number(v[0]);
    console.log(`issue: ${v.map(String).join(' ')}`);
  } else if (mode !== 'startup') {
    rows = await consume(conn, buildSql(mode, ckpt, commits), how);
  }
  const t2 = performance.now();
  const ru = process.resourceUsage();
  const threads = (await conn.runAndReadAll("SELECT current_setting('threads') t")).getRows()[0][0];
  console.log(`duck: mode=${mode} result=${how} rows=${rows} init_ms=${(t1 - t0).toFixed(1)} ` +
    `query_ms=${(t2 - t1).toFixed(1)} rss_init_kb=${rssInitKb} maxrss_kb=${ru.maxRSS} ` +
    `cpu_ms=${((ru.userCPUTime + ru.systemCPUTime) / 1000).toFixed(0)} ` +
    `query_cpu_ms=${((ru.userCPUTime + ru.systemCPUTime - ru1.userCPUTime - ru1.systemCPUTime) / 1000).toFixed(0)} ` +
    `threads=${threads}`);
  conn.closeSync?.();
}

main().catch((e) => { console.error(e?.message ?? e); process.exit(1); });
