"""``ConfigError``: a run config refused, with the dotted fields it concerns.

Forms show the message under each of ``paths`` and the CLI prints it as one line;
nobody parses the message for field names.
"""

from __future__ import annotations

from collections.abc import Sequence


class ConfigError(ValueError):
    """``"<path>: <detail>"``; ``paths`` starts with the field the error is about and
    goes on with the other fields of a rule between fields."""

    def __init__(self, path: str, detail: str, *, related: Sequence[str] = ()) -> None:
        self.path = path
        self.detail = detail
        self.paths: tuple[str, ...] = (path, *[p for p in related if p != path])
        super().__init__(f"{path}: {detail}")

    def __reduce__(self) -> tuple[object, ...]:
        # caches pickle errors; the default would call __init__ with the message alone
        return (_rebuild, (type(self), self.path, self.detail, self.paths[1:]))

    def under(self, prefix: str) -> ConfigError:
        """The same error with ``prefix`` (e.g. ``objective.options``) before its paths."""
        return ConfigError(
            f"{prefix}.{self.path}", self.detail, related=[f"{prefix}.{p}" for p in self.paths[1:]]
        )


def _rebuild(cls: type[ConfigError], path: str, detail: str, related: Sequence[str]) -> ConfigError:
    error = ConfigError.__new__(cls)
    ConfigError.__init__(error, path, detail, related=related)
    return error
