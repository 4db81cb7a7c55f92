"""Numbered error messages and the exceptions that carry them (spaCy style).

Every message a user may see lives here, under a searchable code, so that a scholar who
reports ``E003`` and a developer grepping for it land on the same text.

Codes:
    E0xx  Leiden plain text (:func:`apollo_restore.data.readers.leiden.parse_leiden`).
    E1xx  corpus files (readers).
    E2xx  interchange formats (:mod:`apollo_restore.data.formats`).
    E3xx  the text index and its packaged text (:mod:`apollo_restore.data.textindex`).
"""

from __future__ import annotations


class Errors:
    """Message templates; format them with ``str.format`` keyword arguments."""

    # Leiden plain text
    E001 = "[E001] unclosed '{open}' opened at line {line}, column {column}"
    E002 = "[E002] stray '{close}' at line {line}, column {column}: no '{open}' is open"
    E003 = (
        "[E003] '{open}' at line {line}, column {column} is nested inside another '{open}' "
        "opened at line {outer_line}, column {outer_column}; close the first one before opening another"
    )
    E004 = "[E004] empty brackets '{open}{close}' at line {line}, column {column}: write the lost letters as [.5] or [- - -]"
    E005 = "[E005] bad lacuna length '{spec}' at line {line}, column {column}: a lacuna counts at least one letter"
    E006 = (
        "[E006] bad lacuna range '{spec}' at line {line}, column {column}: "
        "the lower bound must not exceed the upper bound"
    )
    E007 = "[E007] lacuna length '{spec}' at line {line}, column {column} is too long (at most {limit} letters)"
    # corpus files
    E101 = "[E101] cannot read corpus file {path}: {reason}"
    # interchange formats
    E201 = "[E201] {path}, line {line}: {reason}"
    # the text index
    E301 = "[E301] refusing to index splits {splits}: only the train split may enter the text index"
    E302 = "[E302] no packaged training text at {path}: reinstall the package, or pack one with scripts/pack_train_text.py"
    E303 = "[E303] {path} starts with {found!r}, this code reads {expected!r}"
    E304 = "[E304] no text index in {path}: open it with no path to build the default one from the packaged text"
    E305 = "[E305] {path} holds an index of format/normaliser {found}, this code reads {expected}"
    E306 = "[E306] provenance needs at least {min_run} letters of text; got {letters}"


class LeidenError(ValueError):
    """Malformed Leiden text, with the place of the problem.

    Attributes:
        position: 0-based character offset in the input.
        line: 1-based line number.
        column: 1-based column number (characters, not bytes).
    """

    def __init__(self, message: str, position: int, line: int, column: int) -> None:
        super().__init__(message)
        self.position = position
        self.line = line
        self.column = column


class CorpusError(ValueError):
    """A corpus file that cannot be read (not well-formed, wrong encoding, ...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(Errors.E101.format(path=path, reason=reason))
        self.path = path
        self.reason = reason


class FormatError(ValueError):
    """A malformed line in an interchange file (gap set, predictions, peer files)."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(Errors.E201.format(path=path, line=line, reason=reason))
        self.path = path
        self.line = line
        self.reason = reason
