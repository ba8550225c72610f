"""The lab's sentences say what happened: no range whose ends agree, no "other N" that means all N, plain grammar."""

from __future__ import annotations

from rlbook.publish.prose import degenerate


def _answer(before: float, after: float, advantage: float | None) -> dict:
    return {"before": before, "after": after, "advantage": advantage}


def _moved(node, *records: list[dict]) -> list[str]:
    return node({"movedText": [{"trained": True, "top": top} for top in records], "data": {}})["movedText"]


def test_answers_with_no_advantage_that_did_not_move_are_said_to_hold_still(node):
    (text,) = _moved(node, [_answer(0.1, 0.1, 0), _answer(0.2, 0.2, None), _answer(0.3, 0.3, 0)])
    assert text == "None of the 3 answers listed had a non-zero advantage in this step's group, and none of them moved."
    assert "other" not in text


def test_with_no_advantage_anywhere_the_moved_answers_are_counted_not_called_the_other_ones(node):
    every, some = _moved(
        node,
        [_answer(0.1, 0.12, 0), _answer(0.2, 0.21, 0)],
        [_answer(0.1, 0.12, 0), _answer(0.2, 0.21, 0), _answer(0.3, 0.3, 0)],
    )
    assert every.endswith("; both moved all the same, because the update moved other answers.")
    assert some.endswith(
        "; 2 of them moved all the same, because the update moved other answers, and the other one held still."
    )


def test_credited_answers_are_split_by_how_they_moved_and_the_rest_by_whether_they_moved(node):
    (text,) = _moved(
        node,
        [
            _answer(0.1, 0.12, 1),
            _answer(0.2, 0.19, 1),
            _answer(0.3, 0.3, -1),
            _answer(0.3, 0.4, 0),
            _answer(0.3, 0.3, 0),
        ],
    )
    assert text == (
        "3 of the 5 answers listed had a non-zero advantage in this step's group: 1 moved the way its advantage "
        "points, 1 moved against its advantage and 1 held still. Of the other 2, with no advantage, 1 moved because "
        "the update moved other answers and the rest held still."
    )


def test_when_every_answer_is_credited_no_other_answers_are_mentioned(node):
    (text,) = _moved(node, [_answer(0.1, 0.12, 1), _answer(0.2, 0.22, 1), _answer(0.2, 0.22, -1)])
    assert text.startswith("All 3 answers listed had a non-zero advantage")
    assert "other" not in text


def _run(first: float, last: float, verifier: str = "exact", loophole: tuple[float, ...] = (0.0,)) -> dict:
    return {
        "evals": [{"heldoutExpectedReward": first}, {"heldoutExpectedReward": last}],
        "steps": [{"step": i + 1, "loopholeShare": s} for i, s in enumerate(loophole)],
        "recipe": {"verifier": verifier},
    }


def _references(*finals: float) -> list[dict]:
    return [{"seed": s, "heldout_expected_reward": [0.3, f]} for s, f in enumerate(finals)]


def test_a_book_run_whose_seeds_ended_alike_gets_one_value_not_a_range(node):
    (text,) = node(
        {"summaryText": [[_run(0.3, 0.0, "fail-open"), _references(0.0, 0.001, 0.0), "exploit"]], "data": {}}
    )["summaryText"]
    assert "The book's exploit run ended at 0.00 on each of seeds 0, 1 and 2; this run ended level with it." in text
    assert "between" not in text and "somewhere else" not in text
    assert text.endswith("The loophole paid for no answer in any batch.")
    assert not degenerate(text)


def test_a_book_run_whose_seeds_differ_lists_them_and_places_this_run(node):
    above, inside = node(
        {
            "summaryText": [
                [_run(0.3, 0.55), _references(0.45, 0.49, 0.5), "main"],
                [_run(0.3, 0.47), _references(0.45, 0.49, 0.5), "main"],
            ],
            "data": {},
        }
    )["summaryText"]
    assert (
        "The book's main run ended at 0.45, 0.49 and 0.50 on seeds 0, 1 and 2; this run ended above all of them."
        in above
    )
    assert "this run ended within their range" in inside
    assert not degenerate(above + " " + inside)


def test_a_loophole_that_paid_a_little_is_never_at_most_zero_percent(node):
    texts = node({"loopholeText": [_run(0, 0, loophole=(0.0, 0.003)), _run(0, 0, loophole=(0.0, 0.2))], "data": {}})[
        "loopholeText"
    ]
    assert texts == [
        "The loophole paid for at most 0.3 % of a batch.",
        "The loophole paid for at most 20 % of a batch.",
    ]


RECIPE = {
    "lr": 0.001,
    "warmup": 0,
    "group_size": 16,
    "advantage": "centered",
    "verifier": "exact",
    "steps": 60,
    "temperature": 1,
    "weight_decay": 0,
    "eval_n": 32,
    "checkpoint_every": 10,
}
DATA = {"recipes": {"main": RECIPE}, "splits": {"train": ["1+2="] * 3, "heldout": ["2+2="]}}


def test_a_changed_recipe_names_what_changed_in_plain_words(node):
    two, one = node(
        {
            "describe": [
                [{**RECIPE, "group_size": 4, "advantage": "none"}, None],
                [{**RECIPE, "verifier": "fail-open"}, None],
            ],
            "data": DATA,
        }
    )["describe"]
    assert two.startswith(
        "No run of the book used this recipe: it is main's with a different group size and baseline. "
    )
    assert one.startswith("No run of the book used this recipe: it is main's with a different verifier. ")
