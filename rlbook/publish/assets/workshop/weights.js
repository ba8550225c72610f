// The book's checkpoints as the page receives them, and their weights hash.
//
// rlbook.publish.checkpoints writes every weight tensor end to end, in the
// sorted-name order of rlbook.policy.weights_hash, as float32 bits. To keep
// the page small without changing a single bit, it splits the 4 bytes of
// every float into 4 planes (the plane of sign and exponent bytes compresses
// well, the mantissa planes hardly at all), deflates them and writes them in
// base 85 (Python's base64.b85encode, which needs no escape in a JavaScript
// string and adds a quarter to the bytes where base64 adds a third); a checkpoint
// stored as a delta holds the XOR of its bits with those of its base
// checkpoint (main's RL steps leave most signs and exponents as they were).

const B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/** The first `size` bytes of a base-85 text: each 5 characters, most significant first, are 4 bytes. */
function fromBase85(text, size) {
  const digit = new Uint8Array(128);
  for (let i = 0; i < 85; i++) digit[B85.charCodeAt(i)] = i;
  const bytes = new Uint8Array(text.length / 5 * 4);
  const view = new DataView(bytes.buffer);
  for (let g = 0; g < text.length / 5; g++) {
    let value = 0;
    for (let c = 0; c < 5; c++) value = value * 85 + digit[text.charCodeAt(5 * g + c)];
    view.setUint32(4 * g, value);  // big-endian, as b85encode writes it
  }
  return bytes.subarray(0, size);
}

async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The float32 weights of an exported checkpoint; `base` (a Float32Array) undoes a delta. */
export async function decodeCheckpoint(entry, base = null) {
  const planes = await inflate(fromBase85(entry.data, entry.bytes));
  const n = planes.length / 4;
  const bits = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    bits[i] = (planes[i] | planes[n + i] << 8 | planes[2 * n + i] << 16 | planes[3 * n + i] << 24) >>> 0;
  }
  if (entry.delta) {
    const baseBits = new Uint32Array(base.buffer, base.byteOffset, n);
    for (let i = 0; i < n; i++) bits[i] ^= baseBits[i];
  }
  return new Float32Array(bits.buffer);
}

/** Name -> [offset, shape] of each tensor in the flat vector. */
export function layout(tensors) {
  const places = {};
  let offset = 0;
  for (const [name, shape] of tensors) {
    places[name] = [offset, shape];
    offset += shape.reduce((a, b) => a * b, 1);
  }
  return { places, size: offset };
}

/** Views into `flat`, one per tensor, named as in the PyTorch state dict (they share its memory). */
export function views(flat, tensors) {
  const { places } = layout(tensors);
  const out = {};
  for (const [name, [offset, shape]] of Object.entries(places)) {
    out[name] = flat.subarray(offset, offset + shape.reduce((a, b) => a * b, 1));
  }
  return out;
}

/**
 * rlbook.policy.weights_hash of these weights: the first 16 hex digits of the
 * SHA-256 of each tensor's name and then its float32 bytes, in sorted-name
 * order. The page shows the hash it computes from the very numbers it samples
 * with, so a reader can match it to the run record.
 */
export async function weightsHash(flat, tensors) {
  const encoder = new TextEncoder();
  const parts = [];
  for (const [name, [offset, shape]] of Object.entries(layout(tensors).places)) {
    const count = shape.reduce((a, b) => a * b, 1);
    parts.push(encoder.encode(name), new Uint8Array(flat.buffer, flat.byteOffset + 4 * offset, 4 * count));
  }
  const whole = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", whole));
  return Array.from(digest.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}
