"""Edition orthography: show ``norm.v1`` readings as an edition writes them.

The model reads and writes lowercase unaccented letters with iota adscript (``κυριωι``); a
scholar expects ``κυρίῳ``. :class:`EditionForms` maps each normalised word to the form the
training editions use most often (accents, breathings, iota subscript where the corpus writes
it, capitals of names, final sigma), counted as running text (a final-syllable acute before
punctuation counts as the grave it becomes before a word), and shown with that grave turned
acute where the context asks for it (before punctuation, at the end of the text, or before an
enclitic: ``ὑπό τινος``).

    forms = EditionForms.load()                    # the table shipped in the package
    forms.display("κυριωι", prefix="τωι ", suffix=" χαιρειν")   # 'κυρίῳ'
    forms.display("ριωι", prefix="τωι κυ", suffix=" χαιρειν")   # 'ρίῳ': cut from 'κυρίῳ'

A reading that is part of a word (the gap starts or ends inside one) is displayed as the
matching part of the whole word formed with the context, so ``[.3]ου`` after ``κυ`` and a
reading ``ρι`` shows ``ρί``, cut from ``κυρίου``. The table is built from the train split only
(``scripts/build_edition_forms.py``) and stored as two sorted columns, keys and forms, so that
loading it is one decompression and two splits (a CLI call waits for it), and a lookup a bisection.
"""

from __future__ import annotations

import bisect
import gzip
import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from apollo_restore.data.document import Document, Lacuna, LineBreak, Supplied, Text
from apollo_restore.data.normalise import GREEK_LETTERS, fix_final_sigma, fold, normalise

FORMS_FILE = Path(__file__).resolve().parent / "forms" / "edition_forms.txt.gz"
FORMAT = "apollo_restore edition-forms.v2"

_GAP = "\x00"  # stands for a lacuna in the raw text of a document
_WORD = re.compile(r"(?:[^\W\d_]|[\u0300-\u036f])+")
_LETTER_RUN = re.compile(f"[{GREEK_LETTERS}]+")
_EDGE_LEFT = re.compile(f"[{GREEK_LETTERS}]*$")
_EDGE_RIGHT = re.compile(f"^[{GREEK_LETTERS}]*")
_NEXT = re.compile(r"\s*(.?)", re.S)
_VOWELS = set("αεηιουω")
_DIPHTHONG_FIRST = {"ι": "αεηου", "υ": "αεηοω"}
_GRAVE, _ACUTE = "\u0300", "\u0301"


def attach_leading_marks(form: str) -> str:
    """Put breathings and accents that stand before a word's first letter on that letter (NFC).

    Editions and the corpora often write a capital's breathing as a mark before it
    (``\u0313Απόλλων``, from the print convention ``᾿Απόλλων``); as text that is a stray mark
    followed by a bare capital. Moved onto the letter it composes (``Ἀπόλλων``)."""
    n = 0
    while n < len(form) and unicodedata.combining(form[n]):
        n += 1
    if n == 0 or n == len(form):
        return form
    return unicodedata.normalize("NFC", form[n] + form[:n] + form[n + 1 :])


def raw_text(doc: Document) -> str:
    """The edition's letters as written (NFC, accents kept): supplements in-filled, a lacuna as
    ``\\x00`` (so that words touching it can be left out), line breaks joined or spaced."""
    out = []
    for seg in doc.segments:
        if isinstance(seg, (Text, Supplied)):
            out.append(seg.text)
        elif isinstance(seg, Lacuna):
            out.append(_GAP)
        elif isinstance(seg, LineBreak):
            out.append("" if seg.in_word else " ")
    return unicodedata.normalize("NFC", "".join(out))


def edition_words(doc: Document) -> Iterator[tuple[str, str, bool]]:
    """``(key, form, stop)`` for every whole Greek word of a document: its ``norm.v1`` key, its
    NFC form in the edition, and whether punctuation or the end follows it (where an oxytone
    keeps its acute). Words touching a lacuna, or with letters of other scripts, are left out."""
    text = raw_text(doc)
    for match in _WORD.finditer(text):
        start, end = match.span()
        if (start and text[start - 1] == _GAP) or (end < len(text) and text[end] == _GAP):
            continue
        form = attach_leading_marks(match.group())
        key = word_key(form)
        if key:
            after = _NEXT.match(text, end).group(1)
            yield key, form, not after or fold(after).strip() == "·"


@lru_cache(maxsize=1 << 20)
def word_key(form: str) -> str:
    """``normalise(form)`` if it is one word of Greek letters only, else ``""``."""
    key = normalise(form)
    if not key or not all(ch in GREEK_LETTERS for ch in key) or len(key) < sum(ch.isalpha() for ch in form):
        return ""
    return key


#: enclitics an edition may write without any mark (no breathing: they start with a consonant)
UNMARKED_WORDS = frozenset(
    "τις τι τε γε μου μοι με σου σοι σε που πως ποτε πω τινος τινι τινα τινες τινων τισι τισιν τινας "
    "φημι φησι φησιν τοι νυν περ".split()
)


#: single letters that are words (``norm.v1``): the article ``ὁ``/``ἡ``, ``ἤ``, ``ὦ``/``ᾧ``, the
#: relative ``ἅ``; any other letter alone is a numeral or a stray letter, shown bare (not ``ὑ``)
ONE_LETTER_WORDS = frozenset("οηωα")
#: enclitics (``norm.v1``) before which a final-syllable grave is written acute (``ὑπό τινος``,
#: ``καί τε``): the indefinite ``τις``, the particles, and the present of ``εἰμί`` and ``φημί``; the
#: unstressed pronouns ``μου``/``μοι``/``με`` (after a preposition the editions write ``ἐμοῦ``)
ENCLITICS = frozenset(
    "τις τι τινος τινι τινα τινες τινων τισι τισιν τινας τε γε τοι περ μου μοι με "
    "εστι εστιν εισι εισιν εσμεν εστε φημι φησι φησιν φασι φασιν φαμεν φατε".split()
)
#: ``σου``/``σοι``/``σε`` are enclitic too, but not after a preposition (``παρὰ σοῦ``, ``πρὸς σέ``)
SECOND_PERSON = frozenset("σου σοι σε".split())
PREPOSITIONS = frozenset("παρα περι επι απο υπο κατα μετα δια προς υπερ ανα αντι αμφι".split())
_NEXT_WORD = re.compile(f"[ ]*([{GREEK_LETTERS}]+)")


def before_enclitic(word: str, after: str) -> bool:
    """Whether the ``norm.v1`` text ``after`` a word starts with an enclitic that takes that
    word's accent (:data:`ENCLITICS`; ``σου``, ``σοι``, ``σε`` unless ``word`` is a preposition),
    so that its final-syllable grave is written acute."""
    found = _NEXT_WORD.match(after)
    if not found:
        return False
    nxt = found.group(1)
    return nxt in ENCLITICS or (nxt in SECOND_PERSON and word not in PREPOSITIONS)


def is_edition_form(key: str, form: str) -> bool:
    """Whether a form shows its word is a word: it carries an accent, breathing or other mark,
    or is an enclitic written bare. A key only ever written bare is mostly an abbreviation
    written as on the papyrus (``στρ`` for ``στρ(ατηγῷ)``, ``τραπ``), which must not make a
    truncated reading look like a known word; the table leaves such keys out."""
    return key in UNMARKED_WORDS or any(unicodedata.combining(ch) for ch in unicodedata.normalize("NFD", form))


def final_accent(form: str, stop: bool) -> str:
    """``form`` with a final-syllable grave turned acute before a stop, and an acute turned grave
    before another word (NFC in, NFC out)."""
    nfd = unicodedata.normalize("NFD", form)
    bases = [i for i, ch in enumerate(nfd) if not unicodedata.combining(ch)]
    vowels = [i for i in bases if nfd[i].lower() in _VOWELS]
    if not vowels:
        return form
    first = vowels[-1]  # the final syllable's nucleus: the last vowel, or the diphthong it ends
    before = bases.index(first) - 1
    if (
        nfd[first] in "ιυ"
        and "\u0308" not in nfd[first : bases[bases.index(first) + 1] if first != bases[-1] else None]
    ):
        if before >= 0 and nfd[bases[before]].lower() in _DIPHTHONG_FIRST[nfd[first]]:
            first = bases[before]
    old, new = (_GRAVE, _ACUTE) if stop else (_ACUTE, _GRAVE)
    head, tail = nfd[:first], nfd[first:]
    if old not in tail:
        return form
    return unicodedata.normalize("NFC", head + tail.replace(old, new))


_CIRCUMFLEX, _DIAERESIS = "\u0342", "\u0308"
_ACCENTS = frozenset((_ACUTE, _GRAVE, _CIRCUMFLEX))
_SHORT = frozenset("εοΕΟ")  # vowels that are always short: never a circumflex
_DIPHTHONG_SECOND = frozenset("ιυΙΥ")


def valid_accents(form: str, enclitic: bool = False) -> str:
    """``form`` with accents Greek allows (NFC in, NFC out): a circumflex never on ε or ο (some
    editions write a variant spelling with the accent of the standard one, ``ἐνεστο͂τος`` for
    ``ἐνεστῶτος``): on a diphthong ``ει``, ``οι``, ``ευ``, ``ου`` it moves to the second vowel, as
    Greek writes it (``λε͂ι`` → ``λεῖ``), else it becomes the acute a short vowel takes
    (``ἐνεστότος``); and at most one accent a word, the first (a second one, written before an
    enclitic, is kept only with ``enclitic``: the word stands before one, ``ἄνθρωπός τις``)."""
    nfd = unicodedata.normalize("NFD", form)
    if not any(ch in _ACCENTS for ch in nfd):
        return form
    clusters: list[list[str]] = []
    for ch in nfd:
        if unicodedata.combining(ch) and clusters:
            clusters[-1].append(ch)
        else:
            clusters.append([ch])
    for i, cluster in enumerate(clusters):
        if cluster[0] in _SHORT and _CIRCUMFLEX in cluster:
            cluster.remove(_CIRCUMFLEX)
            nxt = clusters[i + 1] if i + 1 < len(clusters) else None
            if nxt is not None and nxt[0] in _DIPHTHONG_SECOND and _DIAERESIS not in nxt:
                nxt.append(_CIRCUMFLEX)
            else:
                cluster.append(_ACUTE)
    seen = False
    for cluster in clusters if not enclitic else ():
        for mark in [ch for ch in cluster[1:] if ch in _ACCENTS]:
            if seen:
                cluster.remove(mark)
            seen = True
    return unicodedata.normalize("NFC", "".join("".join(c) for c in clusters))


def _piece_lengths(form: str) -> list[int]:
    """Normalised letters each NFC character of a form becomes (``ῳ`` → 2, an accent mark → 0)."""
    return [len(fold(ch).strip()) for ch in form]


class EditionForms:
    """Normalised word → its most frequent edition form.

    Args:
        forms: ``{key: form}`` with ``key == normalise(form)``.
    """

    def __init__(self, forms: dict[str, str]):
        self.keys = sorted(forms)
        self.values = [forms[key] for key in self.keys]

    @classmethod
    def from_forms(cls, forms: list[str]) -> EditionForms:
        """A table of forms, keyed by normalising them (one string, one translate)."""
        keys = fix_final_sigma(unicodedata.normalize("NFD", " ".join(forms).lower()).translate(_FOLD)).split(" ")
        return cls(dict(zip(keys, forms)))

    @classmethod
    def load(cls, path: Path = FORMS_FILE) -> EditionForms:
        """Read a table written by :meth:`save`: a header line, then the sorted keys and their
        forms, each column one space-separated line, gzip-compressed."""
        header, keys, values = gzip.decompress(path.read_bytes()).decode("utf-8").split("\n")
        if header != FORMAT:
            raise ValueError(f"{path}: not an {FORMAT} table")
        table = cls.__new__(cls)
        table.keys, table.values = keys.split(" "), values.split(" ")
        return table

    def save(self, path: Path) -> int:
        """Write the table gzip-compressed (xz is 0.5 MB smaller but takes 3× as long, 0.07 s,
        to decompress on each CLI call); returns bytes written."""
        text = "\n".join([FORMAT, " ".join(self.keys), " ".join(self.values)])
        data = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return len(data)

    @property
    def forms(self) -> dict[str, str]:
        """The table as a dict (built on each call: for inspection, not lookups)."""
        return dict(zip(self.keys, self.values))

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, key: str) -> str | None:
        """The stored form of ``key``, or ``None`` (a bisection over the sorted keys)."""
        i = bisect.bisect_left(self.keys, key)
        return self.values[i] if i < len(self.keys) and self.keys[i] == key else None

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def form(self, key: str, stop: bool = False, enclitic: bool = False) -> str:
        """The edition form of one normalised word (the word itself when unknown, or a single
        letter that is no word: :data:`ONE_LETTER_WORDS`). The table
        holds running-text forms; before a stop a final-syllable grave turns acute. Accents are
        those Greek allows (:func:`valid_accents`: no circumflex on ε or ο, one a word but
        before an ``enclitic``). An acute
        stored on a final syllable stays (it is what the editions mostly write there, e.g. an
        abbreviated ``Αὐρήλ``)."""
        found = self.get(key) if len(key) > 1 or key in ONE_LETTER_WORDS else None
        if not found:
            return key
        found = valid_accents(attach_leading_marks(found), enclitic)
        return final_accent(found, True) if stop else found

    def display(self, reading: str, prefix: str = "", suffix: str = "") -> str:
        """A ``norm.v1`` reading in edition form, each word chosen from the whole word it makes
        with the context (``prefix``/``suffix``: the normalised text around the gap).

        Letters, spaces and ``·`` of the reading keep their order; only letters change form.
        """
        left = _EDGE_LEFT.search(prefix).group()
        right = _EDGE_RIGHT.search(suffix).group()
        full = left + reading + right
        lo, hi = len(left), len(left) + len(reading)
        out = [ch for ch in reading]  # default: the normalised character itself
        pieces: dict[int, str] = {}
        for match in _LETTER_RUN.finditer(full):
            start, end = match.span()
            after = full[end:] if end < len(full) else suffix[len(right) :]
            stop = not after.strip() or after.lstrip()[0] == "·"
            # before a stop, or an enclitic (ὑπό τινος), a final grave is written acute
            enclitic = before_enclitic(match.group(), after)
            form = self.form(match.group(), stop or enclitic, enclitic)
            at = start
            for ch, n in zip(form, _piece_lengths(form)):
                if lo <= at < hi:
                    pieces[at - lo] = pieces.get(at - lo, "") + ch
                elif n == 0 and lo < at <= hi and at - 1 - lo in pieces:
                    pieces[at - 1 - lo] += ch  # a separate mark belongs to the letter before
                at += n
            # a letter absorbed by a two-letter character (ῳ = ωι) that began before it
            covered = set(range(start, at))
            for pos in range(max(start, lo), min(end, hi)):
                if pos in covered and pos - lo not in pieces:
                    pieces[pos - lo] = ""
        return "".join(pieces.get(i, out[i]) for i in range(len(reading)))

    def unknown_words(self, reading: str, prefix: str = "", suffix: str = "") -> list[str]:
        """Words a reading makes with its context that the training editions never spell.

        Only whole words are checked: a word running into another gap (``-``/``…``) or past
        a context cut is not; the text's own start and end (empty context) are boundaries. A
        truncated reading where the gap ends at a word boundary (``τραπ`` before a space) is the case this catches.
        """
        left = _EDGE_LEFT.search(prefix).group()
        right = _EDGE_RIGHT.search(suffix).group()
        full = left + reading + right
        before, rest = prefix[: len(prefix) - len(left)], suffix[len(right) :]
        # a word runs on into another gap, or past a context cut inside it (the text's own
        # start or end, an empty prefix or suffix, is a word boundary)
        open_left = (bool(left) and not before) or before[-1:] in ("-", "…")
        open_right = (bool(right) and not rest) or rest[:1] in ("-", "…")
        words = []
        for match in _LETTER_RUN.finditer(full):
            start, end = match.span()
            if (start == 0 and open_left) or (end == len(full) and open_right):
                continue
            if match.group() not in self:
                words.append(match.group())
        return words


class _FoldTable(dict):
    """``str.translate`` table for :meth:`EditionForms.from_forms`: ``fold`` per character,
    spaces kept as the separator."""

    def __missing__(self, codepoint: int) -> str:
        ch = chr(codepoint)
        self[codepoint] = value = " " if ch == " " else fold(ch).strip()
        return value


_FOLD = _FoldTable()


@lru_cache(maxsize=1)
def default_forms() -> EditionForms | None:
    """The table shipped in the package, loaded once (``None`` if it is missing)."""
    return EditionForms.load() if FORMS_FILE.exists() else None
