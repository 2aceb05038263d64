// pq_write_js.mjs OUTDIR: writes Parquet files with hyparquet-writer (an independent
// writer: data page v2, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
// BYTE_STREAM_SPLIT, RLE booleans, dictionaries, SNAPPY and UNCOMPRESSED) for the
// cross-check: deltad's reader must dump them exactly as hyparquet does.
import { parquetWriteFile } from 'hyparquet-writer'

const out = process.argv[2]
if (!out) {
  console.error('usage: node pq_write_js.mjs OUTDIR')
  process.exit(2)
}
const n = Number(process.env.PQ_ROWS || 3000)
const ints = Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : (i * 7919) % 100003 - 50000))
const bigs = Array.from({ length: n }, (_, i) => BigInt(i) * 1000000007n - 5n)
const doubles = Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : i * 1.25e-3 - 3))
const floats = Array.from({ length: n }, (_, i) => Math.fround(i / 7))
const strs = Array.from({ length: n }, (_, i) => (i % 17 === 0 ? null : `add/part-${String(i % 400).padStart(5, '0')}-c000.snappy.parquet`))
const bools = Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : i % 3 === 0))

function columns(enc) {
  return [
    { name: 'i32', data: ints, type: 'INT32', encoding: enc.int },
    { name: 'i64', data: bigs, type: 'INT64', encoding: enc.int, nullable: false },
    { name: 'dbl', data: doubles, type: 'DOUBLE', encoding: enc.float },
    { name: 'flt', data: floats, type: 'FLOAT', encoding: enc.float, nullable: false },
    { name: 'str', data: strs, type: 'STRING', encoding: enc.str },
    { name: 'bool', data: bools, type: 'BOOLEAN' },
  ]
}

const variants = {
  plain: { int: 'PLAIN', float: 'PLAIN', str: 'PLAIN' },
  delta: { int: 'DELTA_BINARY_PACKED', float: 'BYTE_STREAM_SPLIT', str: 'DELTA_LENGTH_BYTE_ARRAY' },
  delta_ba: { int: 'DELTA_BINARY_PACKED', float: 'BYTE_STREAM_SPLIT', str: 'DELTA_BYTE_ARRAY' },
  default: { int: undefined, float: undefined, str: undefined },
}
for (const [name, enc] of Object.entries(variants)) {
  for (const codec of ['SNAPPY', 'UNCOMPRESSED']) {
    await parquetWriteFile({
      filename: `${out}/js_${name}_${codec}.parquet`,
      columnData: columns(enc),
      codec,
      rowGroupSize: 1000,
      pageSize: 4096,
    })
  }
}
