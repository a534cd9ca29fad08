"""Self-contained blocks of a page, each with one call site in its view."""
