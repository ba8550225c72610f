// The prefix tree ("forest") of the sequences a batch reads.
//
// A batch of rollouts repeats itself: the 60 prompts of an RL step share their
// first characters ("U:3+" begins ten of them), and the 16 answers to one
// prompt share the prompt and often their first digits. A causal transformer's
// activations at a position depend only on the characters up to it, so each
// distinct prefix needs to be read once. This is rlbook's sampling trick
// (distinct prefixes, rlbook.sampling._children) and its update's trick
// (distinct answers, rlbook.rl.generated_logprobs) taken one step further:
// every distinct prefix of the batch is one node, read once, and the update's
// gradient flows back through the same nodes. A node's context is its chain of
// ancestors, so attention over a node's ancestors is attention over exactly
// the characters that precede it.
//
// Nodes are numbered in creation order, so a parent always comes before its
// children. Each node also owns its rows of the activation arrays of
// forward.js, which the forest allocates and grows.

export class Forest {
  /** `fields` maps an activation array's name to its width per node (forward.js gives them). */
  constructor(vocabSize, blockSize, fields, capacity = 256) {
    this.vocab = vocabSize;
    this.block = blockSize;
    this.fields = fields;
    this.capacity = 0;
    this.count = 0;
    this.roots = new Int32Array(vocabSize).fill(-1);
    this.grow(capacity);
  }

  /** Make room for at least `capacity` nodes, keeping what is stored. */
  grow(capacity) {
    if (capacity <= this.capacity) return;
    const old = this.capacity;
    const size = Math.max(capacity, 2 * old);
    const resize = (Kind, array, width, fill) => {
      const next = new Kind(size * width);
      if (fill !== 0) next.fill(fill);
      if (array) next.set(array.subarray(0, old * width));
      return next;
    };
    this.token = resize(Int32Array, this.token, 1, 0);
    this.pos = resize(Int32Array, this.pos, 1, 0);
    this.parent = resize(Int32Array, this.parent, 1, 0);
    this.children = resize(Int32Array, this.children, this.vocab, -1);
    // The node ids of each node's context, root first, itself last.
    this.context = resize(Int32Array, this.context, this.block, 0);
    this.contextLength = resize(Int32Array, this.contextLength, 1, 0);
    for (const [name, width] of Object.entries(this.fields)) this[name] = resize(Float64Array, this[name], width, 0);
    this.capacity = size;
  }

  /** Forget every node (the arrays are kept for the next batch). */
  reset() {
    this.children.fill(-1, 0, this.count * this.vocab);
    this.roots.fill(-1);
    this.count = 0;
  }

  /** The node for `token` after node `parent` (-1: at the start), created if new. */
  child(parent, token) {
    const slot = parent < 0 ? -1 : parent * this.vocab + token;
    const known = parent < 0 ? this.roots[token] : this.children[slot];
    if (known >= 0) return known;
    const depth = parent < 0 ? 0 : this.contextLength[parent];
    if (depth >= this.block) throw new RangeError(`a sequence longer than the context of ${this.block}`);
    if (this.count === this.capacity) this.grow(this.count + 1);
    const id = this.count++;
    this.token[id] = token;
    this.pos[id] = depth;
    this.parent[id] = parent;
    if (parent < 0) this.roots[token] = id;
    else {
      this.children[slot] = id;
      this.context.copyWithin(id * this.block, parent * this.block, parent * this.block + depth);
    }
    this.context[id * this.block + depth] = id;
    this.contextLength[id] = depth + 1;
    return id;
  }

  /** The node after reading all of `tokens` from the start (creating what is new). */
  insert(tokens) {
    let node = -1;
    for (const token of tokens) node = this.child(node, token);
    return node;
  }
}
