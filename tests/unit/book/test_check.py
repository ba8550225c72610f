"""rlbook.book.check: the audit's tallies, its seed triples, its table, and how it reads seeds."""

from __future__ import annotations

import json
import os
import re
from types import SimpleNamespace

import pytest

from rlbook import book
from rlbook.book import check
from rlbook.book.check import Tally
from rlbook.book.claims import Claim
from rlbook.publish.pandoc_ast import pandoc_run
from rlbook.publish.render import pandoc_path


def test_triples_are_disjoint_groups_of_three():
    assert check.triples(range(10)) == [(0, 1, 2), (3, 4, 5), (6, 7, 8)]
    assert check.triples([0, 1]) == []


def test_a_tally_reads_as_seeds_or_triples_and_knows_whether_it_held_everywhere():
    per_seed = Tally("loop", "x", "law", list(range(10)), [0, 1, 2, 3, 4, 5, 6, 7, 8])
    whole = Tally("loop", "y", "law", list(range(10)), None, [True, True, True])
    broken = Tally("loop", "z", "law", list(range(10)), None, None, "ValueError: no")
    assert (per_seed.rate, per_seed.everywhere) == ("9/10", False)
    assert (whole.rate, whole.everywhere) == ("3/3 triples", True)
    assert (broken.rate, broken.everywhere) == ("facts failed", False)


def test_the_report_counts_laws_and_names_a_law_that_failed():
    results = {
        "pinned": [Tally("loop", "x", "law", [0, 1, 2], [0, 1]), Tally("loop", "y", "finding", [0, 1, 2], [0])],
        "native": [Tally("loop", "x", "law", [0, 1, 2], [0, 1, 2]), Tally("loop", "y", "finding", [0, 1, 2], [2])],
    }
    text = check.report(results, "rlbook claims --seeds 0-2", "2026-12-06", "x86_64")
    assert "2 claims: 1 laws and 1 findings. 1 law(s) failed somewhere: x." in text
    assert "| loop | `x` | law | 2/3 | 3/3 | LAW THAT FAILS" in text
    data = check.audit_data(results, "rlbook claims --seeds 0-2", "2026-12-06", "x86_64")
    assert data["claims"][0] == {
        "topic": "loop",
        "name": "x",
        "kind": "law",
        "rates": {"pinned": "2/3", "native": "3/3"},
        "everywhere": False,
    }


@pytest.mark.parametrize(("text", "seeds"), [("0-9", tuple(range(10))), ("0,1,5", (0, 1, 5)), ("0-2,7", (0, 1, 2, 7))])
def test_seeds_are_read_as_ranges_and_lists(text, seeds):
    assert check.parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "a-b", "5-2", "0-5000", "-1"])
def test_bad_seeds_are_refused(text):
    with pytest.raises(ValueError):
        check.parse_seeds(text)


def test_a_statement_with_a_pipe_stays_in_one_cell(monkeypatch):
    # a law whose statement holds pipes, as "KL(ref || pi)" once did: pandoc must read it as one cell of its row
    says = "k3 has the gradient of KL(ref || pi), and k|fresh is a key"
    chapter = SimpleNamespace(CLAIMS=[Claim("pipes", says, lambda F: True, kind="law")])
    monkeypatch.setattr(check, "available_topics", lambda: ["toy"])
    monkeypatch.setattr(check.book, "chapter", lambda topic: chapter)
    audit = {
        "draws": ["pinned", "native"],
        "claims": [{"topic": "toy", "name": "pipes", "kind": "law", "rates": {"pinned": "10/10", "native": "9/10"}}],
    }
    markdown = check.lessons_markdown(audit, "toy")
    doc = json.loads(pandoc_run(pandoc_path(), ["-f", "markdown", "-t", "json"], markdown, print))
    plain = pandoc_run(pandoc_path(), ["-f", "json", "-t", "plain", "--wrap=none"], json.dumps(doc), print)
    (table,) = [block for block in doc["blocks"] if block["t"] == "Table"]
    _, _, columns, _, (body,), _ = table["c"]
    (row,) = body[3]  # the one row of the one body: [attributes, cells]
    assert len(columns) == len(row[1]) == 3  # the law and its two draws, no column more
    assert says in plain and "9/10" in plain


def test_every_statement_the_appendix_prints_reads_as_prose():
    # a constant's name (VERSION_BOUND), a setting's (checkpoint_every) or an operator (<=) is code, not a sentence
    code = re.compile(r"\b[A-Za-z0-9]+_\w+|<=|>=|==|!=|[{}`]")
    named = {c.name: code.findall(c.says) for topic in book.topics() for c in book.chapter(topic).CLAIMS}
    assert {name: found for name, found in named.items() if found} == {}


def test_a_native_child_gets_no_pins_and_a_pinned_child_keeps_them():
    from rlbook.core import numerics

    parent = {**numerics.PINNED, numerics.SWITCH: "pinned", "OTHER": "kept"}
    native = check.draw_environ("native", parent)
    assert native[numerics.SWITCH] == "native" and native["OTHER"] == "kept"
    assert not set(numerics.PINNED) & set(native)
    pinned = check.draw_environ("pinned", parent)
    assert all(pinned[k] == v for k, v in numerics.PINNED.items()) and pinned[numerics.SWITCH] == "pinned"


def _data(topics_rows, command, seeds=(0, 1, 2), draws=("pinned", "native")):
    results = {
        draw: [Tally(topic, name, "law", list(seeds), list(seeds)) for topic, name in topics_rows] for draw in draws
    }
    data = check.audit_data(results, command, "2026-12-06", "machine A")
    data["exercises"] = [
        {"name": f"{t}-ex", "chapter": t, "mistakes": 1, "rates": {}, "everywhere": True, "failed": ""}
        for t in dict.fromkeys(t for t, _ in topics_rows)
    ]
    return data


def test_an_audit_of_one_chapter_replaces_its_rows_and_keeps_every_other_chapter_s():
    book = _data([("limits", "a"), ("loop", "b"), ("working", "c")], "rlbook claims --seeds 0-2")
    one = _data([("loop", "b2")], "rlbook claims --seeds 0-2 loop")
    merged = check.merge(book, one)
    assert [(r["topic"], r["name"]) for r in merged["claims"]] == [("limits", "a"), ("loop", "b2"), ("working", "c")]
    assert [r["chapter"] for r in merged["exercises"]] == ["limits", "loop", "working"]
    assert merged["sources"] == [
        {
            "command": "rlbook claims --seeds 0-2",
            "date": "2026-12-06",
            "machine": "machine A",
            "chapters": ["limits", "working"],
        },
        {
            "command": "rlbook claims --seeds 0-2 loop",
            "date": "2026-12-06",
            "machine": "machine A",
            "chapters": ["loop"],
        },
    ]
    text = check.report_data(merged)
    assert (
        "`rlbook claims --seeds 0-2`, run on 2026-12-06 (machine A), for limits, working; "
        "`rlbook claims --seeds 0-2 loop`, run on 2026-12-06 (machine A), for loop" in text
    )
    assert "3 claims: 3 laws and 0 findings" in text and "| loop | `b2` | law | 3/3 | 3/3 |" in text
    # a second chapter's audit keeps the first's source for the chapters it did not touch
    again = check.merge(merged, _data([("working", "c")], "rlbook claims --seeds 0-2 working"))
    assert [s["chapters"] for s in again["sources"]] == [["limits"], ["loop"], ["working"]]


def test_an_audit_of_other_seeds_or_draws_is_not_merged():
    book = _data([("loop", "b")], "all")
    with pytest.raises(ValueError, match="same seeds and draws"):
        check.merge(book, _data([("loop", "b")], "some", seeds=(0, 1)))
    with pytest.raises(ValueError, match="same seeds and draws"):
        check.merge(book, _data([("loop", "b")], "some", draws=("pinned",)))


def test_a_record_from_before_sources_were_kept_is_read_as_one_source():
    book = _data([("limits", "a"), ("loop", "b")], "rlbook claims --seeds 0-2")
    del book["sources"]
    assert check.sources_words(book) == "`rlbook claims --seeds 0-2`, run on 2026-12-06"
    merged = check.merge(book, _data([("loop", "b")], "rlbook claims --seeds 0-2 loop"))
    assert [s["chapters"] for s in merged["sources"]] == [["limits"], ["loop"]]


def test_the_audit_names_the_machine_that_ran_it():
    words = check.machine_words()
    assert f"{os.cpu_count()} cores" in words
    data = _data([("loop", "b")], "rlbook claims --seeds 0-2")
    data["sources"][0]["machine"] = words
    assert f"run on 2026-12-06 ({words})" in check.report_data(data)


def test_the_claims_audit_uses_its_own_cache_and_gives_the_callers_back(monkeypatch, tmp_path):
    monkeypatch.setattr(check, "audit_cache", lambda: tmp_path / "audit")
    monkeypatch.setenv("RLBOOK_CACHE", str(tmp_path / "the-callers"))
    seen = []
    monkeypatch.setattr(check, "_audit", lambda seeds, topics, out: seen.append(os.environ["RLBOOK_CACHE"]) or [])
    assert check.audit((0, 1, 2), ["loop"]) == []
    assert seen == [str(tmp_path / "audit")] and os.environ["RLBOOK_CACHE"] == str(tmp_path / "the-callers")
    monkeypatch.delenv("RLBOOK_CACHE")
    with pytest.raises(RuntimeError), check.in_audit_cache():
        raise RuntimeError("an audit that fails midway")
    assert "RLBOOK_CACHE" not in os.environ
