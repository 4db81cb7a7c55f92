"""A model's name in plain words, for people (the page, the CLI's heading).

    model_label("default (neural+infini+infini_backward+length+copy+words)")
    # 'default model: a neural network, with letter statistics of the training texts, gap
    #  lengths, the text's own phrases and the text's own words'

Results keep the exact name (:attr:`~apollo_restore.schema.restoration.Restoration.model`, the
``model`` of ``/api/health``): it says which members ran; this is only how it is shown, in the
words each member's class declares (``in_words``; members that say the same are said once).
"""

from __future__ import annotations

import re

from apollo_restore.restoration.members.registry import member_words

_ENSEMBLE = re.compile(r"(?P<folder>.+?) \((?P<members>[\w+-]+)\)")


def model_label(name: str) -> str:
    """``folder (m1+m2+…)`` (an ensemble's name) in words: ``folder model: a neural network,
    with …``; any other name as it is."""
    found = _ENSEMBLE.fullmatch(name)
    if not found:
        return name
    parts = list(dict.fromkeys(member_words(m) or m for m in found["members"].split("+")))
    head, rest = (parts[0], parts[1:]) if parts[0] == member_words("neural") else ("", parts)
    if not rest:
        return f"{found['folder']} model: {head or parts[0]}"
    listed = rest[0] if len(rest) == 1 else ", ".join(rest[:-1]) + " and " + rest[-1]
    return f"{found['folder']} model: " + (f"{head}, with {listed}" if head else listed)
