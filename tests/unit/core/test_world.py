"""The tiny world worked by hand: vocabulary, tasks, prompts and the fixed splits (rlbook.core.world)."""

from __future__ import annotations

import random

import pytest

from rlbook import world
from rlbook.core.world import EOT, EOT_ID, VOCAB, Task, decode, encode, equation_line, parse_prompt, split


def test_vocabulary_has_21_characters_with_eot_last():
    # 10 digits, "+=,?|:" (6), "U", "A", space, newline, then the end-of-turn mark.
    assert len(VOCAB) == 21
    assert len(set(VOCAB)) == 21
    assert EOT == "#" and VOCAB[-1] == EOT and EOT_ID == 20
    assert VOCAB[:10] == tuple("0123456789")


def test_encode_by_hand_and_round_trip():
    assert encode("0") == [0]
    assert encode("9+") == [9, 10]
    assert encode("U:3+4?|A:") == [16, 15, 3, 10, 4, 13, 14, 17, 15]
    text = "U:2+5+1?|A:7,8#\n 12=3"
    assert decode(encode(text)) == text
    assert decode([]) == "" and encode("") == []


def test_decode_accepts_any_int_like_ids():
    import torch

    assert decode(torch.tensor([1, 10, 2, 20])) == "1+2#"


def test_unknown_character_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="'x'"):
        encode("3+x")
    with pytest.raises(ValueError, match="'-'"):
        encode("3-4")


def test_single_step_task_properties():
    t = Task((3, 4))
    assert t.world == "single"
    assert t.prompt == "U:3+4?|A:"
    assert t.answer == 7
    assert t.steps == (7,)
    assert t.completion == "7#"
    assert t.name == "3+4"
    assert Task((9, 8)).completion == "17#"


def test_multi_step_task_properties():
    t = Task((2, 5, 9))
    assert t.world == "multi"
    assert t.prompt == "U:2+5+9?|A:"
    assert t.answer == 16
    assert t.steps == (7, 16)
    assert t.completion == "7,16#"
    assert t.name == "2+5+9"


def test_tasks_are_hashable_values():
    assert Task((1, 2)) == Task((1, 2))
    assert len({Task((1, 2)), Task((1, 2)), Task((2, 1))}) == 2


def test_parse_prompt_good_prompts():
    assert parse_prompt("U:3+4?|A:") == Task((3, 4))
    assert parse_prompt("U:0+0?|A:") == Task((0, 0))
    assert parse_prompt("U:1+2+3?|A:") == Task((1, 2, 3))
    for task in split("all")[:5] + split("train", "multi")[:5]:
        assert parse_prompt(task.prompt) == task


@pytest.mark.parametrize(
    "bad",
    [
        "U:12+4?|A:",  # two-digit operand
        "U:3+4?|A: ",  # trailing character
        " U:3+4?|A:",  # leading character
        "U:3+4?|A",  # truncated
        "U:3+4+5+6?|A:",  # four operands
        "U:3-4?|A:",
        "",
        None,
        34,
    ],
)
def test_parse_prompt_bad_prompts_give_none(bad):
    assert parse_prompt(bad) is None


def test_single_split_sizes():
    sizes = {name: len(split(name)) for name in ("sft", "train", "heldout", "validation", "test", "all")}
    assert sizes == {"sft": 30, "train": 60, "heldout": 40, "validation": 20, "test": 20, "all": 100}


def test_single_split_relations():
    sft, train, heldout = set(split("sft")), set(split("train")), set(split("heldout"))
    validation, test = set(split("validation")), set(split("test"))
    assert sft <= train
    assert not train & heldout
    assert heldout == validation | test and not validation & test
    assert train | heldout == set(split("all"))


def test_splits_are_sorted_and_fixed_across_calls():
    first = split("train")
    assert first == sorted(first, key=lambda t: t.operands)
    assert split("train") == first
    assert split("heldout") == split("heldout")
    assert split("test", "multi") == split("test", "multi")


def test_multi_split_sizes_and_relations():
    sizes = {name: len(split(name, "multi")) for name in ("sft", "train", "heldout", "validation", "test", "all")}
    assert sizes == {"sft": 60, "train": 120, "heldout": 100, "validation": 50, "test": 50, "all": 1000}
    train, heldout = set(split("train", "multi")), set(split("heldout", "multi"))
    assert set(split("sft", "multi")) <= train
    assert not train & heldout
    assert all(t.world == "multi" for t in train | heldout)


def test_unknown_split_or_world_raises():
    with pytest.raises(ValueError, match="unknown split"):
        split("dev")
    with pytest.raises(ValueError, match="unknown world"):
        split("train", "triple")


def test_all_tasks_counts():
    assert len(world.all_tasks("single")) == 100
    assert len(world.all_tasks("multi")) == 1000


def test_equation_line_without_spaces():
    rng = random.Random(0)
    assert equation_line(Task((3, 4)), rng, space_prob=0.0) == "3+4=7\n"
    assert equation_line(Task((9, 9)), rng, space_prob=0.0) == "9+9=18\n"
    assert equation_line(Task((2, 5, 1)), rng, space_prob=0.0) == "2+5+1=7,8\n"


def test_equation_line_with_two_digit_operands():
    rng = random.Random(0)
    # The multi-step pretraining stream adds a digit to a partial sum up to 18.
    assert equation_line(Task((18, 9)), rng, space_prob=0.0) == "18+9=27\n"
    assert equation_line(Task((12, 5)), rng, space_prob=1.0) == "12 + 5 = 17\n"


def test_equation_line_spaces_every_gap_and_never_inside_numbers():
    rng = random.Random(0)
    assert equation_line(Task((3, 4)), rng, space_prob=1.0) == "3 + 4 = 7\n"
    assert equation_line(Task((2, 5, 9)), rng, space_prob=1.0) == "2 + 5 + 9 = 7,16\n"
    for seed in range(20):
        line = equation_line(Task((17, 8)), random.Random(seed), space_prob=0.5)
        assert line.replace(" ", "") == "17+8=25\n"
        assert "1 7" not in line and "2 5" not in line


def test_equation_line_is_reproducible_from_the_rng():
    a = [equation_line(Task((1, 2)), random.Random(7)) for _ in range(3)]
    assert a[0] == a[1] == a[2]
    assert all(ch in VOCAB for ch in a[0])


# ---------------------------------------------------------------- the worked world (chapter 7)


def test_the_worked_world_adds_one_character_after_the_chat_vocabulary():
    assert world.TOKENS[:21] == VOCAB and world.TOKENS[21] == world.SEPARATOR == ";"
    assert encode(";") == [21] and decode([21, 20]) == ";#"
    assert world.vocab_size("single") == world.vocab_size("multi") == 21 and world.vocab_size("worked") == 22
    with pytest.raises(ValueError, match="unknown world"):
        world.vocab_size("triple")


def test_a_worked_task_writes_its_prompt_and_both_styles_by_hand():
    t = world.WorkedTask((47, 38))
    assert (t.world, t.prompt, t.answer, t.name) == ("worked", "#47+38=", 85, "47+38")
    assert t.completion == "85#" and t.working == "7+8=15,4+3+1=8"
    assert world.WorkedTask((47, 38), "worked").completion == "7+8=15,4+3+1=8;85#"
    assert world.WorkedTask((41, 32), "worked").completion == "1+2=3,4+3=7;73#"  # no carry, no "+0"
    assert world.WorkedTask((99, 99), "worked").completion == "9+9=18,9+9+1=19;198#"
    assert len(world.WorkedTask((99, 99), "worked").completion) <= world.WORKED_BUDGET


def test_every_worked_answer_of_every_pair_ends_with_its_sum_after_the_last_separator():
    for t in world.all_tasks("worked"):
        text = world.WorkedTask(t.operands, "worked").completion.removesuffix(EOT)
        assert text.rpartition(";")[2] == str(t.answer)
        units, tens = text.partition(";")[0].split(",")
        for column in (units, tens):
            terms, _, total = column.partition("=")
            assert sum(map(int, terms.split("+"))) == int(total)


@pytest.mark.parametrize(
    "bad",
    [
        {"operands": (9, 38)},
        {"operands": (47, 100)},
        {"operands": (47, 38, 1)},
        {"operands": (47, 38), "style": "shown"},
    ],
)
def test_a_worked_task_refuses_other_operands_and_styles(bad):
    with pytest.raises(ValueError):
        world.WorkedTask(**bad)


def test_plain_prompts_parse_to_worked_tasks_and_chat_prompts_as_before():
    assert parse_prompt("#47+38=") == world.WorkedTask((47, 38))
    assert parse_prompt("U:3+4?|A:") == Task((3, 4)) and parse_prompt("U:3+4?|A:") != world.WorkedTask((34, 34))
    for bad in ("47+38=", "#07+38=", "#4+38=", "#47+38", "#47+38=85", "#100+1="):
        assert parse_prompt(bad) is None


def test_answer_style_reads_any_column_as_working():
    assert world.answer_style("85#") == "direct" and world.answer_style("8") == "direct"
    assert world.answer_style("7+8=15,4+3+1=8;85#") == "worked"
    assert world.answer_style("7+8=1") == "worked"  # cut off by the budget, still working


def test_the_worked_splits_hold_300_pairs_never_trained_on():
    sizes = {name: len(split(name, "worked")) for name in ("sft", "train", "heldout", "validation", "test", "all")}
    assert sizes == {"sft": 40, "train": 300, "heldout": 300, "validation": 150, "test": 150, "all": 8100}
    held = {t.operands for t in split("heldout", "worked")}
    assert not held & {t.operands for t in split("train", "worked")}
    assert {t.operands for t in split("sft", "worked")} <= {t.operands for t in split("train", "worked")}
    assert all(t.style == "direct" and t.world == "worked" for t in split("all", "worked"))


def test_worked_lines_are_columns_or_sums_in_both_styles_and_never_a_held_out_pair():
    held = frozenset(t.operands for t in split("heldout", "worked"))
    rng = random.Random(3)
    lines = [world.worked_line(rng, held) for _ in range(3000)]
    assert all(line.endswith(EOT) and line.count(EOT) == 1 for line in lines)
    sums = [line for line in lines if line[2] == "+"]  # a two-digit sum: "47+38=..."
    columns = [line for line in lines if line[1] == "+"]  # one column: "7+8=15#" or "4+3+1=8#"
    assert len(sums) + len(columns) == len(lines)
    assert abs(len(columns) / len(lines) - world.COLUMN_SHARE) < 0.05
    worked = [line for line in sums if world.SEPARATOR in line]
    assert 0.4 < len(worked) / len(sums) < 0.6
    for line in sums:
        task = parse_prompt(EOT + line[: line.index("=") + 1])
        assert task is not None and task.operands not in held
        assert line[line.index("=") + 1 :] in (world.WorkedTask(task.operands, s).completion for s in world.STYLES)
    assert {c.count("+") for c in columns} == {1, 2}  # with and without a carry
    assert all(sum(map(int, c[: c.index("=")].split("+"))) == int(c[c.index("=") + 1 : -1]) for c in columns)
