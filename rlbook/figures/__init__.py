"""The book's figures, drawn from a chapter's facts (plain data), never from runs.

A page's figure cell calls a function here on its facts (``rlbook.book``):
drawing never trains, samples or loads anything, so a warm page draws in
milliseconds and editing a figure recomputes no fact. The house style, the
colours and the size of a panel are in :mod:`rlbook.figures.style`; each
chapter's figures are in a module of their own (:mod:`rlbook.figures.loop`
for chapter 1, ...).
"""
