// read_stream.js FILE: reads an Arrow IPC stream with the apache-arrow JS library (an
// implementation independent of deltad's C writer) and prints
//   {"schema": [{name, type, nullable, children}], "batches": [n, ...], "rows": [{...}]}
// as one JSON line. Cells are read from each column's buffers (validity, offsets,
// values) so no library-side conversion hides what was written: int64 and timestamps
// (microseconds) print as decimal strings, dates as day numbers, binary as hex, lists as
// arrays, structs as objects, maps as [key, value] pair arrays, and nulls as null.
'use strict';
const fs = require('fs');
const arrow = require('apache-arrow');

function fieldJSON(f) {
  const out = { name: f.name, type: f.type.toString(), nullable: f.nullable };
  if (f.type.children && f.type.children.length) out.children = f.type.children.map(fieldJSON);
  return out;
}

function isValid(d, i) {
  const bm = d.nullBitmap;
  if (!bm || bm.length === 0 || d.nullCount === 0) return true;
  const j = d.offset + i;
  return ((bm[j >> 3] >> (j & 7)) & 1) === 1;
}

function bit(bytes, j) {
  return ((bytes[j >> 3] >> (j & 7)) & 1) === 1;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function cell(d, i) {
  if (!isValid(d, i)) return null;
  const j = d.offset + i;
  const T = arrow.Type;
  switch (d.type.typeId) {
    case T.Int:
    case T.Float:
    case T.Date:
    case T.Timestamp: {
      const v = d.values[j];
      return typeof v === 'bigint' ? v.toString() : v;
    }
    case T.Bool:
      return bit(d.values, j);
    case T.Utf8:
    case T.Binary: {
      const bytes = d.values.subarray(d.valueOffsets[j], d.valueOffsets[j + 1]);
      return d.type.typeId === T.Utf8 ? utf8.decode(bytes) : Buffer.from(bytes).toString('hex');
    }
    case T.List: {
      const out = [];
      for (let k = d.valueOffsets[j]; k < d.valueOffsets[j + 1]; k++) out.push(cell(d.children[0], k));
      return out;
    }
    case T.Map: {
      const entries = d.children[0];
      const out = [];
      for (let k = d.valueOffsets[j]; k < d.valueOffsets[j + 1]; k++)
        out.push([cell(entries.children[0], k), cell(entries.children[1], k)]);
      return out;
    }
    case T.Struct: {
      const out = {};
      d.type.children.forEach((f, k) => { out[f.name] = cell(d.children[k], j); });
      return out;
    }
    default:
      throw new Error('unexpected type ' + d.type.toString());
  }
}

function main() {
  const table = arrow.tableFromIPC(fs.readFileSync(process.argv[2]));
  const rows = [];
  const batches = [];
  for (const batch of table.batches) {
    batches.push(batch.numRows);
    const d = batch.data;
    for (let i = 0; i < batch.numRows; i++) {
      const row = {};
      table.schema.fields.forEach((f, k) => { row[f.name] = cell(d.children[k], d.offset + i); });
      rows.push(row);
    }
  }
  if (rows.length !== table.numRows) throw new Error('row count mismatch');
  const out = { schema: table.schema.fields.map(fieldJSON), batches, rows };
  process.stdout.write(JSON.stringify(out) + '\n');
}

main();
