"""Where a training document's edition can be read: one function from a document id to a URL.

edition_url("bgu.1.100", "ddb")      # 'https://papyri.info/ddbdp/bgu;1;100'
edition_url("ISic003024", "inscription")
edition_label("3.26", "inscription")  # 'IOSPE 3.26': an id that does not name its corpus, named
"""

from __future__ import annotations

import re
from urllib.parse import quote

# inscription corpora: an id pattern, the corpus's page for it, and the corpus's name where the
# id does not say it (IOSPE's ``3.26``, IIP's ``akko0001``, IRCyr's ``C.123``)
_INSCRIPTIONS = (
    (re.compile(r"^ISic\d+$"), "http://sicily.classics.ox.ac.uk/inscription/{id}", ""),
    (re.compile(r"^iAph\d+$"), "https://insaph.kcl.ac.uk/iaph2007/{id}.html", ""),
    (re.compile(r"^IGCyr\d+$|^GVCyr\d+$"), "https://igcyr.unibo.it/{id_lower}", ""),
    (re.compile(r"^[a-z]{4}\d{4}$"), "https://library.brown.edu/iip/viewinscr/{id}", "IIP"),
    (re.compile(r"^\d+\.\d+$"), "https://iospe.kcl.ac.uk/{id}.html", "IOSPE"),
    (re.compile(r"^[A-Z]\.\d+$"), "https://ircyr2020.inslib.kcl.ac.uk/en/inscriptions/{id}/", "IRCyr"),
)


def edition_label(doc_id: str, source: str) -> str:
    """A training document's name as a reader looks it up: the id, preceded by its corpus where the
    id alone does not say it (``IOSPE 3.26``, not ``3.26``); papyri and literary ids as they are."""
    if source == "inscription":
        for pattern, _, corpus in _INSCRIPTIONS:
            if corpus and pattern.match(doc_id):
                return f"{corpus} {doc_id}"
    return doc_id


def edition_url(doc_id: str, source: str) -> str | None:
    """A link to the edition of a training document, or ``None`` where none can be derived.

    DDbDP ids (``series.volume.number``, the series may hold dots; no volume when the part
    before the number is not a number) go to ``https://papyri.info/ddbdp/series;volume;number``;
    DCLP ids (Trismegistos numbers) to ``https://papyri.info/dclp/<id>``; inscriptions to their
    corpus's page where the id's form identifies the corpus; literary works to a search for the
    work (``author.work``) on the Perseus Catalog.
    """
    if source == "ddb":
        parts = doc_id.split(".")
        if len(parts) < 2:
            return f"https://papyri.info/search?STRING={quote(doc_id)}"
        if len(parts) >= 3 and parts[-2].isdigit():  # series.volume.number
            return "https://papyri.info/ddbdp/" + ";".join([".".join(parts[:-2]), parts[-2], parts[-1]])
        return "https://papyri.info/ddbdp/" + ".".join(parts[:-1]) + ";;" + parts[-1]  # no volume
    if source == "dclp":
        return f"https://papyri.info/dclp/{quote(doc_id)}"
    if source == "inscription":
        for pattern, url, _ in _INSCRIPTIONS:
            if pattern.match(doc_id):
                return url.format(id=doc_id, id_lower=doc_id.lower())
        return None
    if source == "literary":
        return "https://catalog.perseus.org/?q=" + quote(doc_id.replace("_", " ").replace(".", " "))
    return None
