#!/usr/bin/env node
// tensoracle backend runner for ONNX Runtime (CPU), through the onnxruntime-node
// package. It follows the kit's executable backend protocol (docs/BACKENDS.md):
//
//   node runner.js [--opt all|disabled] MODEL INPUT_DIR OUTPUT_DIR
//       reads INPUT_DIR/input_<k>.pb (graph-input order), writes
//       OUTPUT_DIR/output_<k>.pb (graph-output order); exit 0 ran, exit 3 did not
//       load (stderr line "unsupported: ..." when ORT lacks a kernel or type,
//       otherwise a compile failure), exit 1 runtime error.
//   node runner.js --probe
//       exit 0 (printing the package version) when onnxruntime-node loads, 4 when not.
//   node runner.js [--opt all|disabled] --worker
//       the same for many cases: one line "MODEL\tINPUT_DIR\tOUTPUT_DIR" per case
//       on stdin, one JSON line {"status": ..., "message": ...} per case on stdout.
//   --rewrites (with either form)
//       also writes OUTPUT_DIR/rewritten.onnx, the graph ORT executes after its
//       optimizations (optimizedModelFilePath), for the kit's rewrite feedback.
//
// The package is looked up in $TENSORACLE_ORT_MODULES (a node_modules folder),
// then next to the repository (third_party/npm/node_modules, where scripts/setup
// installs it), then by Node's normal resolution.
//
// Tensors cross as ONNX TensorProto files. The package ships no protobuf
// library, and TensorProto needs only a few fields, so this file reads and
// writes them itself (proto2 wire format: varints and length-delimited fields).
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');

function loadOrt() {
  const candidates = [];
  if (process.env.TENSORACLE_ORT_MODULES) candidates.push(path.join(process.env.TENSORACLE_ORT_MODULES, 'onnxruntime-node'));
  candidates.push(path.join(__dirname, '..', '..', 'third_party', 'npm', 'node_modules', 'onnxruntime-node'));
  candidates.push('onnxruntime-node');
  for (const c of candidates) {
    try {
      return require(c);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  return null;
}

// ONNX TensorProto.DataType -> onnxruntime-node tensor type and typed array.
const DTYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 10: ['float16', Uint16Array],
  11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const DTYPE_OF_TYPE = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v[0], Number(k)]));
const DTYPE_NAMES = {8: 'string', 14: 'complex64', 15: 'complex128', 16: 'bfloat16'};

class ProtocolError extends Error {}
class UnsupportedError extends Error {}

// --- proto2 wire format, the subset TensorProto needs -------------------------
function readVarint(buf, pos) {
  let result = 0n, shift = 0n;
  for (;;) {
    if (pos.i >= buf.length) throw new ProtocolError('truncated varint');
    const b = buf[pos.i++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
    if (shift > 63n) throw new ProtocolError('varint longer than 10 bytes');
  }
}
function toSigned64(v) { return BigInt.asIntN(64, v); }

function decodeTensor(buf, where) {
  const t = {dims: [], dataType: 0, name: '', raw: null, floats: [], doubles: [], int32s: [], int64s: [], uint64s: []};
  const pos = {i: 0};
  const packedOrOne = (wire, readOne, out) => {
    if (wire === 2) {
      const len = Number(readVarint(buf, pos));
      const end = pos.i + len;
      if (end > buf.length) throw new ProtocolError('truncated packed field');
      while (pos.i < end) out.push(readOne());
    } else {
      out.push(readOne());
    }
  };
  const varint = () => readVarint(buf, pos);
  const fixed32f = () => { const v = buf.readFloatLE(pos.i); pos.i += 4; return v; };
  const fixed64d = () => { const v = buf.readDoubleLE(pos.i); pos.i += 8; return v; };
  while (pos.i < buf.length) {
    const key = Number(readVarint(buf, pos));
    const field = key >>> 3, wire = key & 7;
    switch (field) {
      case 1: packedOrOne(wire, () => toSigned64(varint()), t.dims); break;
      case 2: t.dataType = Number(varint()); break;
      case 4: packedOrOne(wire, fixed32f, t.floats); break;
      case 5: packedOrOne(wire, () => BigInt.asIntN(32, varint()), t.int32s); break;
      case 7: packedOrOne(wire, () => toSigned64(varint()), t.int64s); break;
      case 10: packedOrOne(wire, fixed64d, t.doubles); break;
      case 11: packedOrOne(wire, () => varint(), t.uint64s); break;
      case 8: case 9: {
        if (wire !== 2) throw new ProtocolError(`field ${field} is not length-delimited`);
        const len = Number(readVarint(buf, pos));
        if (pos.i + len > buf.length) throw new ProtocolError('truncated bytes field');
        const bytes = buf.subarray(pos.i, pos.i + len);
        pos.i += len;
        if (field === 8) t.name = bytes.toString('utf8'); else t.raw = bytes;
        break;
      }
      default: {  // skip fields we do not need (doc_string, segment, external data ...)
        if (wire === 0) readVarint(buf, pos);
        else if (wire === 1) pos.i += 8;
        else if (wire === 5) pos.i += 4;
        else if (wire === 2) pos.i += Number(readVarint(buf, pos));
        else throw new ProtocolError(`unknown wire type ${wire}`);
        if (field === 13 || field === 14) throw new UnsupportedError(`${where}: external tensor data is not supported by this runner`);
      }
    }
  }
  const entry = DTYPES[t.dataType];
  if (!entry) throw new UnsupportedError(`${where}: element type ${DTYPE_NAMES[t.dataType] || t.dataType} cannot cross the onnxruntime-node API`);
  const [type, Array_] = entry;
  const count = t.dims.reduce((a, d) => a * Number(d), 1);
  let data;
  if (t.raw) {
    if (t.raw.length !== count * Array_.BYTES_PER_ELEMENT) {
      throw new ProtocolError(`${where}: raw_data holds ${t.raw.length} bytes, shape needs ${count * Array_.BYTES_PER_ELEMENT}`);
    }
    data = new Array_(count);
    Buffer.from(data.buffer).set(t.raw);
  } else {
    // Typed fields: floats in float_data, doubles in double_data, 64-bit ints in
    // int64_data / uint64_data, every narrower integer, bool and float16 bits in int32_data.
    const src = type === 'float32' ? t.floats : type === 'float64' ? t.doubles : type === 'int64' ? t.int64s
      : type === 'uint64' ? t.uint64s : type === 'uint32' ? t.uint64s : t.int32s;
    if (src.length !== count) throw new ProtocolError(`${where}: ${src.length} values, shape needs ${count}`);
    data = new Array_(count);
    for (let i = 0; i < count; ++i) {
      const v = src[i];
      data[i] = (Array_ === BigInt64Array || Array_ === BigUint64Array) ? BigInt(v) : Number(v);
    }
  }
  return {type, data, dims: t.dims.map(Number), name: t.name};
}

function writeVarint(out, v) {
  let x = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x !== 0n) b |= 0x80;
    out.push(b);
  } while (x !== 0n);
}
function encodeTensor(tensor, name) {
  const dataType = DTYPE_OF_TYPE[tensor.type];
  if (dataType === undefined) throw new UnsupportedError(`output '${name}': element type ${tensor.type} is not supported by this runner`);
  const head = [];
  for (const d of tensor.dims) { writeVarint(head, (1 << 3) | 0); writeVarint(head, d); }
  writeVarint(head, (2 << 3) | 0); writeVarint(head, dataType);
  const nameBytes = Buffer.from(name, 'utf8');
  writeVarint(head, (8 << 3) | 2); writeVarint(head, nameBytes.length);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const rawHead = [];
  writeVarint(rawHead, (9 << 3) | 2); writeVarint(rawHead, raw.length);
  return Buffer.concat([Buffer.from(head), nameBytes, Buffer.from(rawHead), raw]);
}

// --- one case ------------------------------------------------------------------
// Throws UnsupportedError (missing kernel or type: ORT's NOT_IMPLEMENTED and its
// type checks), a load error (anything else from session creation) or a run error.
class LoadError extends Error {}

// Evidence that ORT lacks something (a kernel, a type, a mode of an op) rather than
// failing on the model: its NOT_IMPLEMENTED kernel lookup, its type refusals, and
// the messages its kernels give for configurations they do not implement.
function isUnsupported(message) {
  return /Could not find an implementation for|NOT_IMPLEMENTED|Unsupported data type|not supported|not implemented|only supports|is not a registered function\/op/i.test(message);
}

async function runCase(ort, level, rewrites, model, inputDir, outputDir) {
  let session;
  try {
    // One thread per session: a campaign runs cases side by side (--jobs) instead, and a
    // thread pool made per case costs more than the small graphs it would speed up.
    const threads = Number(process.env.TENSORACLE_ORT_THREADS || 1);
    const options = {graphOptimizationLevel: level, executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1};
    if (rewrites) {
      // The optimized graph, written when the session is made (a few ms on small graphs).
      // Saving it after layout optimizations logs a warning that the file is for this
      // machine only; warnings are silenced so that stderr keeps only the failure.
      options.optimizedModelFilePath = path.join(outputDir, 'rewritten.onnx');
      options.logSeverityLevel = 3;
    }
    session = await ort.InferenceSession.create(model, options);
  } catch (e) {
    const message = String(e && e.message || e);
    throw isUnsupported(message) ? new UnsupportedError(message) : new LoadError(message);
  }
  try {
    // The protocol carries tensors: a graph with a sequence, map or optional input or
    // output, or a tensor type that cannot cross the API, is unsupported by this runner.
    const crossing = (m, what) => {
      if (!m) return;
      for (const v of m) {
        if (v.isTensor === false) throw new UnsupportedError(`runner.js: ${what} '${v.name}' is not a tensor (sequence, map or optional)`);
        if (v.type !== undefined && DTYPE_OF_TYPE[v.type] === undefined) {
          throw new UnsupportedError(`runner.js: ${what} '${v.name}' has element type ${v.type}, which this runner does not carry`);
        }
      }
    };
    crossing(session.inputMetadata, 'graph input');
    crossing(session.outputMetadata, 'graph output');
    const feeds = {};
    session.inputNames.forEach((name, k) => {
      const file = path.join(inputDir, `input_${k}.pb`);
      if (!fs.existsSync(file)) throw new ProtocolError(`missing ${file} for graph input '${name}'`);
      const t = decodeTensor(fs.readFileSync(file), file);
      feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    });
    let results;
    try {
      results = await session.run(feeds);
    } catch (e) {
      const message = String(e && e.message || e);
      // A kernel ORT lacks for this type shows only when the session runs.
      if (isUnsupported(message)) throw new UnsupportedError(message);
      throw e;
    }
    session.outputNames.forEach((name, k) => {
      fs.writeFileSync(path.join(outputDir, `output_${k}.pb`), encodeTensor(results[name], name));
    });
  } finally {
    await session.release();
  }
}

function classify(e) {
  const message = String(e && e.message || e).split('\n')[0];
  if (e instanceof UnsupportedError) return {status: 'unsupported', message, exit: 3};
  if (e instanceof LoadError) return {status: 'compile_failure', message, exit: 3};
  return {status: 'runtime_error', message, exit: 1};
}

async function main() {
  const args = process.argv.slice(2);
  let level = 'all', worker = false, probe = false, rewrites = false;
  const positional = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--opt') {
      level = args[++i];
      if (!['all', 'disabled', 'basic', 'extended'].includes(level)) {
        process.stderr.write(`runner.js: --opt takes all, extended, basic or disabled, got '${level}'\n`);
        process.exit(2);
      }
    } else if (args[i] === '--worker') worker = true;
    else if (args[i] === '--rewrites') rewrites = true;
    else if (args[i] === '--probe') probe = true;
    else positional.push(args[i]);
  }
  const ort = loadOrt();
  if (!ort) {
    process.stderr.write('runner.js: onnxruntime-node is not installed (run scripts/setup, or set TENSORACLE_ORT_MODULES to a node_modules folder holding it)\n');
    process.exit(4);
  }
  if (probe) {  // is the package here? prints its version
    process.stdout.write(`${ort.env && ort.env.versions ? ort.env.versions.common || '' : ''} node ${process.version}\n`);
    process.exit(0);
  }
  if (!worker) {
    if (positional.length !== 3) {
      process.stderr.write('usage: runner.js [--opt all|disabled] [--rewrites] MODEL INPUT_DIR OUTPUT_DIR | --worker\n');
      process.exit(2);
    }
    try {
      await runCase(ort, level, rewrites, ...positional);
      process.exit(0);
    } catch (e) {
      const r = classify(e);
      process.stderr.write((r.status === 'unsupported' ? 'unsupported: ' : '') + r.message + '\n');
      process.exit(r.exit);
    }
  }
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  for await (const line of rl) {
    if (line.trim() === '') continue;
    const parts = line.split('\t');
    let reply;
    if (parts.length !== 3) {
      reply = {status: 'runtime_error', message: `runner.js: expected MODEL<TAB>INPUT_DIR<TAB>OUTPUT_DIR, got ${JSON.stringify(line)}`};
    } else {
      try {
        await runCase(ort, level, rewrites, ...parts);
        reply = {status: 'ok'};
      } catch (e) {
        const r = classify(e);
        reply = {status: r.status, message: r.message};
      }
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write(`runner.js: ${e && e.stack || e}\n`);
  process.exit(1);
});
