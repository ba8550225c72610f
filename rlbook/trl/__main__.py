"""``python -m rlbook.trl``: a TRL run of the book's ``main`` configuration (see :func:`rlbook.trl.launch.main`)."""

from rlbook.trl.launch import main

raise SystemExit(main())
