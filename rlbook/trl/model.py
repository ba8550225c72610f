"""The book's tokenizer and policy in Hugging Face's terms (appendix): a character tokenizer, and the policy as a
``GPT2LMHeadModel`` holding the very same weights, and back again.

Nothing here imports TRL or transformers at module level: without the
``trl`` extra the module still imports, :func:`have_trl` says False and
:data:`INSTALL_HINT` says what to install.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from rlbook.core.policy import Policy, PolicyConfig
from rlbook.core.world import EOT, EOT_ID, VOCAB

TRL_PACKAGES = ("trl", "transformers", "accelerate", "datasets")


def install_hint(package_root: Path | None = None) -> str:
    """What to install, as a command that works from any folder (the appendix's notebook runs in its own).

    It names the repository that this ``rlbook`` was installed from by its absolute path, as a notebook
    cell's ``%pip`` line (which installs into the kernel's Python); without a repository beside the
    package (a plain install) it gives the command to run in a checkout.
    """
    root = package_root or Path(__file__).resolve().parents[2]
    lead = "TRL is not installed. Install the extra, keeping the CPU build of torch"
    constraints = root / "constraints-trl.txt"
    if constraints.is_file() and (root / "pyproject.toml").is_file():
        return f'{lead}, in a notebook cell: %pip install -c "{constraints}" -e "{root}[trl]"'
    return f'{lead}, in a checkout of the book: pip install -c constraints-trl.txt -e ".[trl]"'


INSTALL_HINT = install_hint()


def have_trl() -> bool:
    """Whether the ``trl`` extra (trl, transformers, accelerate, datasets) is importable (appendix)."""
    return all(importlib.util.find_spec(name) is not None for name in TRL_PACKAGES)


def trl_versions() -> dict[str, str]:
    """Installed versions of the ``trl`` extra's packages, "not installed" for a missing one (appendix)."""
    found = {}
    for name in TRL_PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def char_tokenizer():
    """The book's character vocabulary as a ``PreTrainedTokenizerFast`` with rlbook's token ids (appendix).

    A ``tokenizers`` WordLevel model over :data:`rlbook.core.world.VOCAB` (id = the
    character's index, as :func:`rlbook.core.world.encode`), a pre-tokenizer that
    splits text into single characters and a decoder that joins them back.
    The end-of-turn mark is the end-of-sequence token; the vocabulary has no
    padding character, so, as in GPT-2, the end-of-sequence token also serves
    as padding and beginning of text. Padding is harmless: TRL masks every
    position after a completion's first end-of-sequence token, and all
    prompts of one world have the same length. Prompts are padded on the
    left, as generation needs.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(vocab={ch: i for i, ch in enumerate(VOCAB)}, unk_token=None))
    core.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token=EOT, pad_token=EOT, bos_token=EOT, padding_side="left"
    )


def gpt2_config(cfg: PolicyConfig):
    """A ``GPT2Config`` with the shape of rlbook's policy (appendix).

    Same width, depth, heads, context and vocabulary; exact GELU (GPT-2's
    default is the tanh approximation); no dropout; an output layer of its
    own (rlbook does not tie it to the token embedding); the end-of-turn id
    as end, beginning and padding token.
    """
    from transformers import GPT2Config

    return GPT2Config(
        vocab_size=cfg.vocab_size,
        n_positions=cfg.block_size,
        n_embd=cfg.d_model,
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        activation_function="gelu",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        tie_word_embeddings=False,
        bos_token_id=EOT_ID,
        eos_token_id=EOT_ID,
        pad_token_id=EOT_ID,
    )


_TOP_LEVEL = (
    ("tok.weight", "transformer.wte.weight"),
    ("pos.weight", "transformer.wpe.weight"),
    ("ln_f.weight", "transformer.ln_f.weight"),
    ("ln_f.bias", "transformer.ln_f.bias"),
    ("head.weight", "lm_head.weight"),
)
_BLOCK_NORMS = (("ln1", "ln_1"), ("ln2", "ln_2"))
_BLOCK_LINEARS = (
    ("attn.qkv", "attn.c_attn"),
    ("attn.out", "attn.c_proj"),
    ("mlp.0", "mlp.c_fc"),
    ("mlp.2", "mlp.c_proj"),
)


def weight_names(cfg: PolicyConfig) -> list[tuple[str, str, bool]]:
    """``(rlbook name, GPT-2 name, transposed)`` for every weight of the policy (appendix).

    GPT-2 keeps its linear layers as ``Conv1D`` modules whose weight is the
    transpose of ``nn.Linear``'s; the query/key/value layout (all queries,
    then keys, then values, heads contiguous) is the same in both models.
    """
    names = [(ours, theirs, False) for ours, theirs in _TOP_LEVEL]
    for i in range(cfg.n_layer):
        ours, theirs = f"blocks.{i}.", f"transformer.h.{i}."
        for a, b in _BLOCK_NORMS:
            names += [(f"{ours}{a}.{p}", f"{theirs}{b}.{p}", False) for p in ("weight", "bias")]
        for a, b in _BLOCK_LINEARS:
            names += [
                (f"{ours}{a}.weight", f"{theirs}{b}.weight", True),
                (f"{ours}{a}.bias", f"{theirs}{b}.bias", False),
            ]
    return names


def to_gpt2(policy: Policy):
    """A ``GPT2LMHeadModel`` computing exactly what ``policy`` computes (appendix).

    The weights are copied one by one (see :func:`weight_names`); the two
    models give the same logits for the same ids.
    """
    from transformers import GPT2LMHeadModel

    state = policy.state_dict()
    model = GPT2LMHeadModel(gpt2_config(policy.cfg))
    converted = {
        theirs: (state[ours].t() if flip else state[ours]).detach().clone().contiguous()
        for ours, theirs, flip in weight_names(policy.cfg)
    }
    model.load_state_dict(converted, strict=True)
    return model


def from_gpt2(model, version: str = "trl") -> Policy:
    """rlbook's :class:`~rlbook.core.policy.Policy` holding a ``GPT2LMHeadModel``'s weights (appendix).

    The inverse of :func:`to_gpt2`, so that rlbook's sampler, evaluation and
    weight hash apply to a model that TRL trained. The shape is read from the
    model's config, the weights are copied to the CPU, and the result carries
    ``version``.
    """
    c = model.config
    cfg = PolicyConfig(
        vocab_size=c.vocab_size, block_size=c.n_positions, n_layer=c.n_layer, n_head=c.n_head, d_model=c.n_embd
    )
    state = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    policy = Policy(cfg)
    policy.load_state_dict(
        {
            ours: (state[theirs].t() if flip else state[theirs]).clone().contiguous()
            for ours, theirs, flip in weight_names(cfg)
        },
        strict=True,
    )
    policy.version = version
    return policy
