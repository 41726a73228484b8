// Minimal NumPy .npy (version 1.0) reader/writer for little-endian numeric arrays.
'use strict';
const fs = require('fs');

const DESCR = {
  float32: ['<f4', Float32Array], float64: ['<f8', Float64Array], int64: ['<i8', BigInt64Array],
  int32: ['<i4', Int32Array], int16: ['<i2', Int16Array], int8: ['|i1', Int8Array], uint8: ['|u1', Uint8Array],
  float16: ['<f2', Uint16Array], uint16: ['<u2', Uint16Array], uint32: ['<u4', Uint32Array], uint64: ['<u8', BigUint64Array], bool: ['|b1', Uint8Array],
};

function writeNpy(path, type, dims, data) {
  const [descr] = DESCR[type] || [];
  if (!descr) throw new Error(`no .npy dtype for ${type}`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const entry = Object.entries(DESCR).find(([, [d]]) => d === descr.replace('<b1', '|b1'));
  if (!entry) throw new Error(`${path}: unsupported dtype ${descr}`);
  const [type, [, Ctor]] = entry;
  const bytes = buf.subarray(start + hlen);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return { type, dims, data: new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT) };
}

module.exports = { writeNpy, readNpy };
