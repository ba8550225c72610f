"""rlbook.exercises.pasteable: a reference solution's box runs alone, in a namespace that has nothing imported."""

from __future__ import annotations

import inspect

from rlbook.exercises import pasteable
from rlbook.exercises.registry import all_exercises


def test_the_imports_bind_every_global_a_reference_reads():
    exercise = all_exercises()["blind-spot"]  # reads Callable (an annotation), rw, parse_prompt and a constant
    lines = pasteable.imports(exercise.reference, inspect.getsource(exercise.reference))
    assert "from collections.abc import Callable" in lines
    assert "from rlbook.core import rewards as rw" in lines
    namespace: dict = {}
    exec("\n".join(lines), namespace)  # noqa: S102 -- the box's own imports, the test's subject
    assert {"Callable", "rw", "parse_prompt", "BLIND_SPOT_PROMPT"} <= set(namespace)


def test_a_module_is_imported_as_itself_and_several_names_share_a_line():
    exercise = all_exercises()["verifier"]
    lines = pasteable.imports(exercise.reference, inspect.getsource(exercise.reference))
    assert "from rlbook.exercises.verifiers import EOT, is_canonical" in lines
    assert pasteable.imports(all_exercises()["pass-at-k"].reference, "def pass_at_k(n, c, k): math.comb(n, k)") == [
        "import math"
    ]


def test_a_function_box_defines_the_answer_cells_name_and_a_value_box_fills_its_variable():
    verifier = all_exercises()["verifier"].source()
    assert "def my_verifier(" in verifier and "reference_verifier" not in verifier
    definitions = all_exercises()["definitions"].source()
    assert definitions.rstrip().endswith("definitions = fill_definitions()")


def test_every_box_defines_its_answer_in_a_fresh_namespace():
    for name, exercise in all_exercises().items():
        code = exercise.source()
        if exercise.answer == "value":  # the call reads the page's variables; the definition alone must run
            code = code.rpartition(f"\n{exercise.answered_as} = ")[0]
        namespace: dict = {}
        exec(code, namespace)  # noqa: S102 -- the box as a reader pastes it
        assert exercise.reference.__name__ in namespace or exercise.answered_as in namespace, name
