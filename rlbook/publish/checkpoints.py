"""The checkpoints and reference values that the book's in-page panels run on.

The web workshop (``rlbook/publish/assets/workshop/``) samples the book's
real ``base`` and ``main`` policies (seed 0) and trains ``base`` in the
reader's browser: chapter 1's lab with ``main``'s recipe or one the reader
changes within the book's choices, the reward-limits chapter's panel with the
``exploit`` run's. This module takes what they need from the run cache at
build time, never retraining anything: both checkpoints' weights, bit for
bit, in a compact form; the splits; the recipes of the runs the lab can be
(:data:`RECIPES`), read from their configurations; and, for ``main`` and
``exploit`` at seeds 0 to 2, the held-out expected reward at every
checkpoint and (for ``exploit``) the share of each batch paid only through
the loophole, which the panels draw beside the reader's own run.

Compact form: the float32 weights of every tensor end to end in
``weights_hash``'s sorted-name order, their four bytes split into four
planes (the sign-and-exponent plane compresses well, the mantissa planes
hardly), deflated, in base 85 (``base64.b85encode``, whose alphabet needs no
escape in a JavaScript string; it adds a quarter to the bytes where base64
adds a third). ``main`` is stored as the XOR of its bits with
``base``'s, which compresses better since RL leaves most signs and exponents
unchanged. ``rlbook/publish/assets/workshop/weights.js`` reads it back.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import asdict, fields

import numpy as np
import torch

from rlbook import runs
from rlbook.core import policy, rewards, rl, world

SEED = 0
"""The seed of the checkpoints the page samples and of the ``base`` its train panel starts from."""

REFERENCE_SEEDS = (0, 1, 2)
"""The seeds of ``main`` whose held-out expected reward the train panel draws beside the reader's run."""

SUPPORTED = {
    "world": ("single",),
    "prompts_per_step": (0,),
    "loss": ("ppo",),
    "aggregation": ("token_mean",),
    "advantage": ("centered",),
    "reward_scale": (1.0,),
    "kl_beta": (0.0,),
    "updates_per_batch": (1,),
    "verifier": ("exact", "fail-open"),
    "verifier_version": (None,),
    "stale": (0,),
    "selection": ("none",),
    "faults": ((),),
}
"""The values of each choice of an RL recipe that the page's JavaScript implements, and nothing else."""

RECIPES = ("main", "exploit", "exploit-slow")
"""The book's runs whose recipes the page knows: the lab names a recipe the reader sets after the run it is."""

REFERENCES = ("main", "exploit")
"""The runs whose seeds the panels draw beside the reader's run."""

GLOBAL_NAME = "RLBOOK_WORKSHOP_DATA"
"""The global variable that the exported script sets (a classic script, so that it loads from file://)."""
MAIN_NAME = "RLBOOK_WORKSHOP_MAIN"
"""The global variable that the script of ``main``'s checkpoint sets."""


def flat_weights(net: policy.Policy) -> tuple[list[tuple[str, list[int]]], np.ndarray]:
    """Each tensor's name and shape in sorted-name order, and all weights end to end as float32."""
    state = sorted(net.state_dict().items())
    tensors = [(name, list(tensor.shape)) for name, tensor in state]
    flat = np.concatenate([tensor.detach().to(torch.float32).reshape(-1).numpy() for _, tensor in state])
    return tensors, flat


def encode_weights(flat: np.ndarray, base: np.ndarray | None = None) -> tuple[str, int]:
    """The compact form of float32 weights (see the module docstring), XORed with ``base``'s bits if given.

    Returns the text and the number of deflated bytes it holds (base 85 pads them to a multiple of 4).
    """
    bits = flat.astype(np.float32).view(np.uint32)
    if base is not None:
        bits = bits ^ base.astype(np.float32).view(np.uint32)
    planes = bits.astype("<u4").view(np.uint8).reshape(-1, 4).T.tobytes()
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate, as the browser's DecompressionStream reads it
    packed = packer.compress(planes) + packer.flush()
    return base64.b85encode(packed, pad=True).decode("ascii"), len(packed)


def decode_weights(text: str, size: int, base: np.ndarray | None = None) -> np.ndarray:
    """The float32 weights of :func:`encode_weights`' output (the Python twin of weights.js)."""
    planes = np.frombuffer(zlib.decompress(base64.b85decode(text)[:size], -15), dtype=np.uint8)
    bits = planes.reshape(4, -1).T.copy().view("<u4").reshape(-1)
    if base is not None:
        bits = bits ^ base.astype(np.float32).view(np.uint32)
    return bits.view(np.float32).copy()


def recipe(cfg: rl.RLConfig) -> dict:
    """An RL recipe as the page needs it, with AdamW's settings; ValueError if the page cannot run it."""
    unsupported = {
        f.name: getattr(cfg, f.name)
        for f in fields(cfg)
        if f.name in SUPPORTED and getattr(cfg, f.name) not in SUPPORTED[f.name]
    }
    if unsupported:
        raise ValueError(f"the web workshop implements {SUPPORTED}, not {unsupported}")
    probe = rl.adamw(  # the optimiser rlbook.core.rl.StepState makes
        [torch.nn.Parameter(torch.zeros(1))], cfg.lr
    ).param_groups[0]
    return {
        "steps": cfg.steps,
        "group_size": cfg.group_size,
        "temperature": cfg.temperature,
        "budget": cfg.budget,
        "lr": cfg.lr,
        "warmup": cfg.warmup,
        "eps_low": cfg.eps_low,
        "eps_high": cfg.eps_high,
        "checkpoint_every": cfg.checkpoint_every,
        "eval_n": cfg.eval_n,
        "betas": list(probe["betas"]),
        "adam_eps": probe["eps"],
        "weight_decay": probe["weight_decay"],
        "loss": cfg.loss,
        "aggregation": cfg.aggregation,
        "advantage": cfg.advantage,
        "verifier": cfg.verifier,
    }


def loophole_share(stored: dict) -> float:
    """The share of one stored batch that its run's verifier paid and the exact verifier rejects.

    ``rlbook.analysis.audit.loophole_share`` computes the same for chapter 5's
    figures (tests/web holds the two together); the publish layer may not
    import the analysis layer, so the few lines are repeated here.
    """
    exact, group_size = rewards.get_verifier("exact"), len(stored["tokens"]) // len(stored["prompts"])
    prompts = [p for p in stored["prompts"] for _ in range(group_size)]
    paid = stored["rewards"].numpy() > 0
    texts = [world.decode(row[:n]) for row, n in zip(stored["tokens"].tolist(), stored["lengths"].tolist())]
    return float(np.mean([bool(p) and exact(q, t).status != "accepted" for p, q, t in zip(paid, prompts, texts)]))


def references(name: str) -> list[dict]:
    """Per seed of ``name`` (:data:`REFERENCE_SEEDS`): its checkpoints' held-out expected reward and, for a run
    against the fail-open verifier, each stored step's loophole share and the first step it passed one half
    (or None)."""
    out = []
    for s in REFERENCE_SEEDS:
        run, cfg = runs.load(name, s), runs.spec(name).rl_config()
        entry = {
            "seed": s,
            "steps": [e["step"] for e in run.evals],
            "heldout_expected_reward": [e["heldout_expected_reward"] for e in run.evals],
        }
        if cfg.verifier == "fail-open":
            shares = [loophole_share(stored) for stored in run.rollouts]
            entry["loophole_steps"] = [stored["step"] for stored in run.rollouts]
            entry["loophole_share"] = shares
            entry["takeover"] = next((stored["step"] for stored, x in zip(run.rollouts, shares) if x > 0.5), None)
        out.append(entry)
    return out


def _checkpoint(run: runs.Run, label: str, base: np.ndarray | None = None) -> tuple[dict, np.ndarray]:
    """The exported entry of a run's last checkpoint, and its flat weights."""
    net = run.policy()
    last = run.log["checkpoints"][-1]
    if policy.weights_hash(net) != last["weights_hash"]:
        raise ValueError(f"{run.name} seed {run.seed}: the loaded weights do not match the recorded hash")
    _, flat = flat_weights(net)
    text, size = encode_weights(flat, base)
    return {
        "name": label,
        "run": run.name,
        "seed": run.seed,
        "version": last["version"],
        "weights_hash": last["weights_hash"],
        "delta": base is not None,
        "bytes": size,
        "data": text,
    }, flat


def export_data(seed: int = SEED) -> dict:
    """Everything the web workshop reads: model shape, vocabulary, splits, recipes, checkpoints, references.

    ``checkpoints`` holds ``base`` and then ``main`` (stored as its difference from ``base``).
    """
    base_run, main_run = runs.load("base", seed), runs.load("main", seed)
    for name in RECIPES:
        start = runs.load(name, seed).log["checkpoints"][0]["weights_hash"]
        if start != base_run.log["checkpoints"][-1]["weights_hash"]:
            raise ValueError(f"{name} does not start from base's last checkpoint")
    base_entry, base_flat = _checkpoint(base_run, "base")
    main_entry, _ = _checkpoint(main_run, "main", base=base_flat)
    tensors, _ = flat_weights(base_run.policy())
    return {
        "format": 2,
        "config": asdict(base_run.policy().cfg),
        "vocab": "".join(world.VOCAB),
        "eot": world.EOT,
        "tensors": tensors,
        "splits": {name: [t.prompt for t in world.split(name)] for name in ("sft", "train", "heldout")},
        "recipes": {name: recipe(runs.spec(name).rl_config()) for name in RECIPES},
        "checkpoints": [base_entry, main_entry],
        "references": {name: references(name) for name in REFERENCES},
    }


def data_script(data: dict) -> str:
    """The exported data without ``main``'s checkpoint, as a classic script that sets
    ``globalThis.RLBOOK_WORKSHOP_DATA``; every page with a panel that runs the policy loads it."""
    shared = {**data, "checkpoints": [c for c in data["checkpoints"] if c["name"] != "main"]}
    return (
        f"// The web workshop's checkpoints and reference values, written by rlbook.publish.checkpoints\n"
        f"// from the run cache. Do not edit.\nglobalThis.{GLOBAL_NAME} = "
        f"{json.dumps(shared, separators=(',', ':'))};\n"
    )


def main_script(data: dict) -> str:
    """``main``'s checkpoint as a classic script that sets ``globalThis.RLBOOK_WORKSHOP_MAIN``; only a page that
    samples ``main`` loads it (it is most of the data's bytes)."""
    (entry,) = [c for c in data["checkpoints"] if c["name"] == "main"]
    return (
        f"// main's checkpoint for the web workshop, written by rlbook.publish.checkpoints. Do not edit.\n"
        f"globalThis.{MAIN_NAME} = {json.dumps(entry, separators=(',', ':'))};\n"
    )
