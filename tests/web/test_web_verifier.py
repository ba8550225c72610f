"""The page's exact verifier (verifier.js) against rlbook.rewards.ExactVerifier on fuzzed inputs."""
from __future__ import annotations

import random

from rlbook import rewards, world

HOSTILE = ("".join(world.VOCAB) + world.EOT * 4 + ",,00" + "\u0663\u0667\u096a\uff17\u00b2\u2212+-_ \t\r\x00\x0b"
           "\u200b\u00a0\u2028\u2029\ud800\udfff\U0001d7d9\u00e9x")
"""Characters to fuzz with: the vocabulary, extra ends, commas and zeros, non-ASCII digits, signs, control,
invisible and line-separator characters, lone surrogates and an astral digit."""


def fuzz_cases(count: int, seed: int = 0) -> list[tuple[object, object]]:
    """(prompt, completion) pairs: real prompts with near-miss answers, and hostile prompts and answers."""
    rng = random.Random(seed)
    tasks = world.all_tasks("single") + rng.sample(world.all_tasks("multi"), 200)

    def noise(limit: int) -> str:
        return "".join(rng.choice(HOSTILE) for _ in range(rng.randint(0, limit)))

    def completion(task: world.Task) -> object:
        steps = list(map(str, task.steps))
        kind = rng.randrange(9)
        if kind == 0:
            return task.completion
        if kind == 1:  # a near miss: off by one, a leading zero, a space, a sign
            steps[-1] = rng.choice([str(task.answer + rng.choice([-1, 1])), "0" + steps[-1], " " + steps[-1],
                                    steps[-1] + " ", "+" + steps[-1], "\u0663", ""])
            return ",".join(steps) + world.EOT
        if kind == 2:
            return task.completion + noise(3)
        if kind == 3:
            return ",".join(steps)  # stopped by the budget
        if kind == 4:
            return noise(6) + world.EOT
        if kind == 5:
            return rng.choice([None, 7, 1.0, ["7#"]])
        return noise(8)

    cases: list[tuple[object, object]] = []
    while len(cases) < count:
        task = rng.choice(tasks)
        prompt = task.prompt
        roll = rng.random()
        if roll < 0.1:
            prompt = rng.choice([prompt + " ", prompt[:-1], "U:13+4?|A:", "u" + prompt[1:], prompt.replace("+", "-"),
                                 prompt.replace(str(task.operands[0]), "\u0663", 1), "", None, 3, noise(12)])
        cases.append((prompt, completion(task)))
    return cases


def test_the_page_verifier_gives_rlbooks_status_and_reward_on_fuzzed_inputs(node):
    cases = fuzz_cases(6000)
    exact = rewards.get_verifier("exact")
    expected = [exact(p, c) for p, c in cases]
    got = node({"verify": cases})["verify"]
    differ = [(case, want.status, have) for case, want, have in zip(cases, expected, got)
              if (want.status, want.reward) != (have["status"], have["reward"])]
    assert not differ, f"{len(differ)} of {len(cases)} verdicts differ, e.g. {differ[:5]}"
    assert {v.status for v in expected} == set(rewards.STATUSES), "the fuzzed cases reach every status"
