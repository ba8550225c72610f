"""rlbook.publish.reading: the words of a built page's main text and the minutes they take to read."""

from __future__ import annotations

from rlbook.publish.reading import WORDS_PER_MINUTE, main_text_words, reading_minutes

PAGE = """<html><head><title>Not counted</title></head><body>
<nav>Contents and other chapters</nav>
<main>
<h1>One two</h1>
<p>Three four <code>skipped code</code> five <math><mi>x</mi></math>.</p>
<details class="callout"><summary>For the referee</summary><p>Hidden until opened.</p></details>
<figure><img src="a.svg" alt="an alt text"><figcaption>A caption read with the figure.</figcaption></figure>
<table><tr><td>cell words</td></tr></table>
<pre><code>x = 1</code></pre>
<p>Six<br>seven</p>
<h2>1.9 Exercises</h2>
<p>Exercise prose is not main text.</p>
</main>
<footer>Not in main</footer>
</body></html>"""


def test_the_main_text_is_the_prose_outside_boxes_code_math_figures_and_tables_before_the_exercises():
    assert main_text_words(PAGE) == 7  # One two / Three four five / Six seven


def test_a_heading_other_than_the_exercises_counts_and_the_minutes_follow_the_pace():
    page = "<main><h2>2.1 Why</h2><p>" + "word " * (2 * WORDS_PER_MINUTE - 2) + "</p></main>"
    assert main_text_words(page) == 2 * WORDS_PER_MINUTE
    assert reading_minutes(page) == 2.0


def test_a_page_without_main_has_no_main_text():
    assert main_text_words("<html><body><p>Loose words.</p></body></html>") == 0
