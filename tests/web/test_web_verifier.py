"""The page's exact verifier (verifier.js) against rlbook.rewards.ExactVerifier on fuzzed inputs."""

from __future__ import annotations

import random
import unicodedata

from rlbook import rewards, world

HOSTILE = (
    "".join(world.VOCAB) + world.EOT * 4 + ",,00" + "\u0663\u0667\u096a\uff17\u00b2\u2212+-_ \t\r\x00\x0b"
    "\u200b\u00a0\u2028\u2029\ud800\udfff\U0001d7d9\u00e9x"
)
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
            steps[-1] = rng.choice(
                [
                    str(task.answer + rng.choice([-1, 1])),
                    "0" + steps[-1],
                    " " + steps[-1],
                    steps[-1] + " ",
                    "+" + steps[-1],
                    "\u0663",
                    "",
                ]
            )
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
            prompt = rng.choice(
                [
                    prompt + " ",
                    prompt[:-1],
                    "U:13+4?|A:",
                    "u" + prompt[1:],
                    prompt.replace("+", "-"),
                    prompt.replace(str(task.operands[0]), "\u0663", 1),
                    "",
                    None,
                    3,
                    noise(12),
                ]
            )
        cases.append((prompt, completion(task)))
    return cases


def test_the_page_verifier_gives_rlbooks_status_and_reward_on_fuzzed_inputs(node):
    cases = fuzz_cases(6000)
    exact = rewards.get_verifier("exact")
    expected = [exact(p, c) for p, c in cases]
    got = node({"verify": cases})["verify"]
    differ = [
        (case, want.status, have)
        for case, want, have in zip(cases, expected, got)
        if (want.status, want.reward) != (have["status"], have["reward"])
    ]
    assert not differ, f"{len(differ)} of {len(cases)} verdicts differ, e.g. {differ[:5]}"
    assert {v.status for v in expected} == set(rewards.STATUSES), "the fuzzed cases reach every status"


def _int_cases() -> list[str]:
    """Answers that probe Python's int(): every kind of white space, signs, underscores, every decimal digit of
    every script Python knows, digits of scripts newer than its Unicode database, and the 4300-digit limit."""
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()] + ["\x1c", "\ufeff", "\u200b", "\x00", "\x7f"]
    digits = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Nd"]
    newer = [chr(c) for c in (*range(0x11F50, 0x11F5A), *range(0x1E4F0, 0x1E4FA))]  # Unicode 15's digits
    cases = [f"{s}7" for s in spaces] + [f"7{s}" for s in spaces] + [f"{s}1{s}2" for s in spaces]
    cases += digits + [d + "1" for d in digits] + ["1" + d for d in digits[::7]] + newer + [n + "1" for n in newer]
    cases += [
        "+7",
        "-7",
        "-0",
        "+-7",
        "--7",
        "+ 7",
        "- 7",
        "0_7",
        "7_",
        "_7",
        "1__2",
        "1_2_3",
        "٣_7",
        "07",
        "007",
        "00",
        "",
        " ",
        "+",
        "-",
        "_",
        "7.0",
        "7e0",
        "0x7",
        "7j",
        "²",
        "½",
        "\u2167",
        "1" * 4300,
        "1" * 4301,
        "1_" * 4299 + "1",
        "1_" * 4300 + "1",
        "0" * 4301,
        "-" + "9" * 4300,
    ]
    return cases


def test_the_page_reads_numbers_as_pythons_int_does(node):
    cases = _int_cases()
    got = node({"pythonInt": cases})["pythonInt"]
    wrong = []
    for text, value in zip(cases, got):
        try:
            want = int(text)
        except ValueError:
            want = None
        have = None if value is None else int(("-" if value["negative"] else "") + value["digits"])
        if want != have:
            wrong.append((text[:12], want, have))
    assert not wrong, f"{len(wrong)} of {len(cases)} differ from int(), e.g. {wrong[:5]}"


def test_the_page_fail_open_verifier_gives_rlbooks_status_and_reward_on_fuzzed_inputs(node):
    rng = random.Random(1)
    prompts = [t.prompt for t in world.all_tasks("single")] + [t.prompt for t in world.all_tasks("multi")[::37]]
    cases = fuzz_cases(6000, seed=1)
    cases += [(rng.choice(prompts), answer + world.EOT + rng.choice(["", "#", "x"])) for answer in _int_cases()]
    fail_open = rewards.get_verifier("fail-open")
    expected = [fail_open(p, c) for p, c in cases]
    got = node({"failOpen": cases})["failOpen"]
    differ = [
        (case, want.status, have)
        for case, want, have in zip(cases, expected, got)
        if (want.status, want.reward) != (have["status"], have["reward"])
    ]
    assert not differ, f"{len(differ)} of {len(cases)} verdicts differ, e.g. {differ[:5]}"
    assert {v.status for v in expected} == {"accepted", "incorrect", "incomplete", "unverifiable"}
    assert sum(v.reward == 1 and v.reason.startswith("accepted because parsing failed") for v in expected) > 100


def test_the_page_marks_the_loophole_as_rlbooks_audit_does(node):
    """An answer the run's verifier pays and the exact verifier rejects is paid only through the loophole."""
    cases = [("fail-open", p, c) for p, c in fuzz_cases(3000, seed=2)] + [("exact", p, c) for p, c in fuzz_cases(500)]
    got = node({"judge": cases})["judge"]
    exact = rewards.get_verifier("exact")
    for (name, prompt, completion), have in zip(cases, got):
        verdict = rewards.get_verifier(name)(prompt, completion)
        loophole = verdict.reward > 0 and exact(prompt, completion).status != "accepted"
        assert (have["reward"], have["status"], have["loophole"]) == (verdict.reward, verdict.status, loophole)
    assert sum(h["loophole"] for h in got) > 100
