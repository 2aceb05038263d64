// pq_dump.mjs FILE: prints every row of a Parquet file, read by hyparquet (an independent
// implementation), one JSON line per row in the canonical form of
// tests/unit/parquet/pq_json.c: raw integers (no date/timestamp conversion), %.17g numbers,
// "0x"+hex for non-string bytes, INT96 as nanoseconds since the epoch.
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const decoder = new TextDecoder()
const parsers = {
  timestampFromMilliseconds: (v) => v,
  timestampFromMicroseconds: (v) => v,
  timestampFromNanoseconds: (v) => v,
  dateFromDays: (v) => v,
  stringFromBytes: (b) => b && decoder.decode(b),
  jsonFromBytes: (b) => b && decoder.decode(b),
  uuidFromBytes: (b) => b,
  geometryFromBytes: (b) => b,
  geographyFromBytes: (b) => b,
}

// C's "%.17g"
export function fmtNum(x) {
  if (!Number.isFinite(x)) return 'null'
  if (x === 0) return '0'
  let [m, es] = x.toExponential(16).split('e')
  let e = parseInt(es, 10)
  // C rounds an exact tie at the 18th digit to even; JavaScript rounds it up.
  const [lm, les] = x.toExponential(100).split('e')
  const ld = lm.replace('-', '').replace('.', '')
  if (ld[17] === '5' && /^0*$/.test(ld.slice(18))) {
    const d = ld.slice(0, 17).split('').map(Number)
    if (d[16] % 2 === 1) {
      let i = 16
      while (i >= 0 && d[i] === 9) d[i--] = 0
      if (i >= 0) d[i]++
      else { d.unshift(1); d.pop() }
      e = parseInt(les, 10) + (i < 0 ? 1 : 0)
    } else {
      e = parseInt(les, 10)
    }
    m = (x < 0 ? '-' : '') + d[0] + '.' + d.slice(1).join('')
  }
  const strip = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s)
  if (e < -4 || e >= 17) {
    return strip(m) + 'e' + (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0')
  }
  const neg = x < 0
  const digits = m.replace('-', '').replace('.', '')
  const s = e >= 0 ? digits.slice(0, e + 1) + '.' + digits.slice(e + 1)
    : '0.' + '0'.repeat(-e - 1) + digits
  return (neg ? '-' : '') + strip(s)
}

export function canon(v) {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'number') return fmtNum(v)
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'string') return JSON.stringify(v)
  if (v instanceof Uint8Array) return '"0x' + Buffer.from(v).toString('hex') + '"'
  if (v instanceof Date) return String(v.getTime())
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return '[' + Array.from(v, canon).join(',') + ']'
  return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + canon(x)).join(',') + '}'
}

const path = process.argv[2]
if (!path) {
  console.error('usage: node pq_dump.mjs FILE')
  process.exit(2)
}
const file = await asyncBufferFromFile(path)
const rows = await parquetReadObjects({ file, compressors, parsers, utf8: false })
const out = rows.map((r) => canon(r)).join('\n')
process.stdout.write(out + (rows.length ? '\n' : ''))
