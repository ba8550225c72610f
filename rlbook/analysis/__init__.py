"""The chapters' measurements, tables and figures, computed from the book's runs (rlbook.runs) with the engine
(rlbook.core)."""
