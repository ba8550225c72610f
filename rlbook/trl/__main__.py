"""``python -m rlbook.trl``: a TRL run of the book's ``main`` configuration (see :func:`rlbook.trl.trainer.main`)."""
from rlbook.trl.trainer import main

raise SystemExit(main())
