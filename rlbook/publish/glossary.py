"""The book's glossary: each term defined once in a chapter, linked there from the glossary and back.

Used by the page "The world at a glance" (its glossary table,
:func:`glossary_markdown`) and by the book's tests (:func:`glossary_problems`).
A chapter defines a term where it first uses it, marking that one
occurrence as a link to the glossary that carries the definition's anchor::

    [*policy*](glance.qmd#gloss-policy){#def-policy}

The glossary's row for the term links back to that anchor and names the
section that holds it. No chapter before the defining one may use the term
in its prose: a reader meets every term of :data:`TERMS` at its definition
first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rlbook.publish.config import Page, book_pages
from rlbook.publish.prose import prose_text
from rlbook.publish.qmd import split_qmd

TERMS: tuple[tuple[str, str], ...] = (
    ("policy", "the model's probabilities for the next character, given the text so far"),
    ("state", "the prompt plus every character written so far"),
    ("action", "the next character the policy writes"),
    ("episode", "one answer, from the prompt to the end-of-turn mark or the token budget"),
    ("reward", "the number the verifier pays for an answer; 1 for a right answer, else 0, after the last action"),
    ("return", "the sum of an episode's rewards; here the final reward"),
    ("rollout", "sampling one episode from the policy; the trajectory is the record it leaves"),
    ("trajectory", "the record a rollout leaves: the states and actions of one episode, and its reward"),
    ("verifier", "a program that reads an answer and decides whether it is right, and if not, why"),
    ("expected return", "the average reward of the policy's answers to a prompt: with a 0/1 reward, P(right)"),
    ("checkpoint", "the policy's weights saved at one step of a run"),
    ("supervised fine-tuning", "training on demonstrated answers (SFT): the data shows what to write"),
    ("held-out", "prompts never trained on, kept to measure what the policy learned"),
    ("temperature", "the number the logits are divided by before sampling: below 1 sharper, above 1 flatter"),
    ("greedy", "the answer built by taking the most likely character at each step"),
    (
        "Wilson interval",
        (
            "a confidence interval for a share measured on n right-or-wrong samples; unlike the share plus or "
            "minus two standard errors, it stays between 0 and 1"
        ),
    ),
    ("group", "the answers sampled for one prompt in one step, scored against each other"),
    ("baseline", "a number subtracted from each reward that does not depend on the answer"),
    ("advantage", "a reward minus its baseline: how much better than its group an answer did"),
    ("REINFORCE", "the policy-gradient update: raise each answer's log-probability by its advantage"),
    ("outcome reward", "a reward that judges the finished answer only"),
    ("process reward", "a reward that judges the intermediate steps too"),
    ("malformed", "an answer the verifier cannot read as an answer"),
    ("process score", "the share of a multi-step answer's steps that its judge finds valid"),
    ("reward shaping", "adding terms to a reward to guide learning, here the process score"),
    ("contextual bandit", "a problem where one action (here a whole answer) earns one reward, with no later states"),
    ("value function", "a learned estimate of the return from a state; PPO's critic, which GRPO-style methods drop"),
    (
        "GAE",
        "generalised advantage estimation: a per-token advantage from a critic, a decaying sum of its later errors",
    ),
    (
        "PPO",
        (
            "proximal policy optimisation: a clipped objective that keeps one batch from moving the policy far; "
            "originally with a critic"
        ),
    ),
    ("GRPO", "group relative policy optimisation: PPO's update with the group's mean reward as baseline, no critic"),
    ("RLOO", "REINFORCE leave-one-out: each answer scored against the mean reward of the rest of its group"),
    (
        "Dr. GRPO",
        "'GRPO done right': GRPO without dividing by the group's standard deviation or by each answer's length",
    ),
    (
        "DAPO",
        (
            "decoupled clip and dynamic sampling policy optimisation: GRPO with clip-higher, a token-level loss, "
            "and zero-variance groups dropped and replaced by fresh samples"
        ),
    ),
    ("zero-variance group", "a group whose answers all earned the same reward: every advantage is 0"),
    (
        "importance ratio",
        "a token's probability under the policy being trained over that under the one that sampled it",
    ),
    (
        "importance sampling",
        "estimating an average under one distribution from samples of another, each weighted by its probability ratio",
    ),
    (
        "surrogate objective",
        "a stand-in objective whose gradient is the policy gradient where the trained and sampling policies agree",
    ),
    ("CISPO", "an update that caps the importance ratio as a weight instead of clipping the objective"),
    (
        "clip-higher",
        "a clip range with a larger upper than lower bound, so that a rare token with positive advantage can rise further",
    ),
    (
        "KL divergence",
        "KL(p ‖ q) = E_p[log p - log q], an expected log-ratio on p's samples: 0 when p and q agree, else positive",
    ),
    ("KL penalty", "a cost on moving the policy away from a reference policy, estimated per token"),
    ("k3", "the per-token KL estimate r - 1 - log r, r the reference's probability of the token over the policy's"),
    ("reward hacking", "satisfying the reward as written while missing the task it stands for"),
    ("fail-open verifier", "a verifier that pays when its own check fails, as an unguarded except clause does"),
    ("reward model", "a learned judge: a model trained to score answers in place of a verifier"),
    ("AUC", "the chance that a judge scores a right answer above a wrong one: 0.5 is a coin flip, 1 a perfect ranking"),
    ("best-of-n", "sampling n answers and keeping the one a judge scores highest"),
    ("reward-model over-optimisation", "training against a learned judge until its score rises and the task falls"),
    ("pass@k", "the chance that at least one of k sampled answers is right"),
    ("sharpening", "RL raising the probability of answers the policy could already sample"),
    ("stale", "rollouts sampled by an older policy than the one being updated"),
    ("worked answer", "an answer that writes its working, the columns of the sum, before the final number"),
    (
        "GSPO",
        (
            "group sequence policy optimisation: GRPO with one importance ratio per answer, the geometric mean "
            "of its tokens', clipped per answer"
        ),
    ),
    ("rotary position embeddings", "positions given by turning each query and key by an angle set by its place"),
    ("entropy", "how undecided a choice is: minus the sum of p log p over its outcomes, 0 when it is certain"),
    ("format reward", "a reward for writing an answer in a required layout, whatever its content"),
    (
        "bootstrap interval",
        "the range of the middle 95 % of a statistic recomputed on many redraws of its data, with replacement",
    ),
    ("slice", "a group of prompts picked by a property of the prompt alone, declared before the results are seen"),
    ("matched", "a comparison of two policies under the same prompts, samples and inference settings"),
    ("retained-capability test", "a check that RL did not cost a skill the policy had before"),
    ("run record", "the account of a run: what was trained, from where, how, with which results"),
    (
        "dynamic sampling",
        "DAPO's refilling of a batch: zero-variance groups dropped, groups for new prompts sampled in their place",
    ),
    ("overlong filtering", "leaving the answers the token budget cut off out of the loss"),
    (
        "soft length penalty",
        "DAPO's reward for length: 0 up to a point, then falling linearly to -1 at the token budget",
    ),
    ("preference pair", "a prompt with two answers to it, one labelled chosen (better) and one rejected"),
    (
        "Bradley–Terry model",
        "the probability that one answer is preferred to another: the logistic function of their scores' difference",
    ),
    (
        "implicit reward",
        "DPO's reward of an answer: beta times the log of its probability under the policy over the reference's",
    ),
    ("process reward model", "a learned judge of steps: a model trained on labelled steps to score new ones (PRM)"),
    (
        "step of an answer",
        "in a worked answer, a column or the final number; a direct answer's only step is its number",
    ),
)
"""Every term of the glossary with its one-line meaning, in the order a reader meets them."""

DEF_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\(glance\.qmd#gloss-(?P<target>[\w-]+)\)\{#def-(?P<slug>[\w-]+)\}")
GLOSSARY_PAGE = "chapters/glance.qmd"


def slug(term: str) -> str:
    """The anchor name of a term: "pass@k" is "pass-k", "KL penalty" is "kl-penalty"."""
    return re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


@dataclass(frozen=True)
class Definition:
    """Where a chapter defines a term: its page, the section holding the definition, the line and the link's text."""

    page: Page
    section: str | None
    line: int
    target: str
    text: str


def definitions(root: Path) -> dict[str, list[Definition]]:
    """Every definition link of every numbered page, by the slug of its anchor (a slug defined twice has two).

    A link may span lines, as prose is wrapped; its section is the last
    heading with a ``#sec-`` id above it.
    """
    found: dict[str, list[Definition]] = {}
    for page in book_pages(root):
        if page.number is None:
            continue
        text = (root / page.source).read_text(encoding="utf-8")
        sections = [
            (m.start(), m.group(1)) for m in re.finditer(r"^#{1,6}\s.*\{#(sec-[\w-]+)[^}]*\}\s*$", text, re.MULTILINE)
        ]
        for m in DEF_LINK.finditer(text):
            section = next((name for at, name in reversed(sections) if at < m.start()), None)
            found.setdefault(m.group("slug"), []).append(
                Definition(
                    page,
                    section,
                    text.count("\n", 0, m.start()) + 1,
                    m.group("target"),
                    " ".join(m.group("text").split()),
                )
            )
    return found


def _mentions(term: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w-]){re.escape(term)}(?:s|es)?(?![\w-])", text, re.IGNORECASE))


def glossary_problems(root: Path, terms: tuple[tuple[str, str], ...] = TERMS) -> list[str]:
    """Every way the book's chapters break the glossary's rules (empty when none does).

    Each term is defined exactly once, by a link to its own glossary row; no
    definition names a term the glossary lacks; and no chapter before the
    defining one mentions the term in its prose.
    """
    found = definitions(Path(root))
    problems = []
    slugs = {slug(term): term for term, _ in terms}
    for key, places in found.items():
        if key not in slugs:
            problems.append(f"{places[0].page.source}:{places[0].line}: #def-{key} defines no term of the glossary")
    chapters = [p for p in book_pages(Path(root)) if p.number is not None]
    for term, _ in terms:
        places = found.get(slug(term), [])
        if len(places) != 1:
            where = ", ".join(f"{p.page.source}:{p.line}" for p in places) or "nowhere"
            problems.append(
                f"{term!r} is defined {len(places)} times ({where}); define it once, where it is first used"
            )
            continue
        place = places[0]
        if place.target != slug(term):
            problems.append(f"{place.page.source}:{place.line}: #def-{slug(term)} links to #gloss-{place.target}")
        for page in chapters[: chapters.index(place.page)]:
            if _mentions(term, _page_prose(root, page)):
                problems.append(f"{page.source}: uses {term!r}, which {place.page.source} defines later")
    return problems


def _page_prose(root: Path, page: Page) -> str:
    blocks = split_qmd((Path(root) / page.source).read_text(encoding="utf-8"))
    return "\n\n".join(prose_text(b.text) for b in blocks if b.kind == "markdown")


def glossary_markdown(root: Path, terms: tuple[tuple[str, str], ...] = TERMS) -> str:
    """The glossary as a table: each term linked to its definition, its meaning, and the section defining it.

    A term not yet defined in any chapter is listed without links (the tests
    refuse that book).
    """
    found = definitions(Path(root))
    rows = ["| term | meaning | defined in |", "|---|---|---|"]
    for term, meaning in sorted(terms, key=lambda t: t[0].lower()):
        places = found.get(slug(term), [])
        if places:
            place = places[0]
            page = Path(place.page.source).relative_to(Path(GLOSSARY_PAGE).parent).as_posix()
            shown = f"[{term}]({page}#def-{slug(term)}){{#gloss-{slug(term)}}}"
            where = f"@{place.section}" if place.section else ""
        else:
            shown, where = f"[{term}]{{#gloss-{slug(term)}}}", ""
        rows.append(f"| {shown} | {meaning} | {where} |")
    return "\n".join(rows)
