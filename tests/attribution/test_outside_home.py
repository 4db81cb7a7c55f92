"""Honest outside its home (issue 62): what the packaged model cannot know it says, at the Python
and command doors — text that is not Greek, repeated or random gets flat places and the whole
range (W801); restore's warnings and refusals (W301, W303, E312); no year 0; a text placed among
inscriptions may come from elsewhere (W802).

    python -m pytest -q tests/attribution/test_outside_home.py
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from typer.testing import CliRunner

from apollo_restore.attribution.attribute import attribute
from apollo_restore.attribution.model import date_summary
from apollo_restore.cli.app import app
from apollo_restore.errors import RequestError
from apollo_restore.schema.answers import year_label

runner = CliRunner()
RANDOM_WORD = "".join(random.Random(1).choice("αβγδεζηθικλμνξοπρστυφχψω") for _ in range(9990))
PASSWD = (  # the head of a Debian /etc/passwd: read as Beta Code ('r/' is a mark), as restore reads it
    "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
    "bin:x:2:2:bin:/bin:/usr/sbin/nologin\nsys:x:3:3:sys:/dev:/usr/sbin/nologin\n"
    "sync:x:4:65534:sync:/bin:/bin/sync\ngames:x:5:60:games:/usr/games:/usr/sbin/nologin\n"
    "man:x:6:12:man:/var/cache/man:/usr/sbin/nologin\nlp:x:7:7:lp:/var/spool/lpd:/usr/sbin/nologin\n"
    "mail:x:8:8:mail:/var/mail:/usr/sbin/nologin\nnews:x:9:9:news:/var/spool/news:/usr/sbin/nologin\n"
    "uucp:x:10:10:uucp:/var/spool/uucp:/usr/sbin/nologin\nproxy:x:13:13:proxy:/bin:/usr/sbin/nologin\n"
    "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\nbackup:x:34:34:backup:/var/backups:/usr/sbin/nologin\n"
)
#: Latin words and Cyrillic look-alikes (К, Т, а) among Greek: dropped, restore says W301; the
#: fragment ``α`` of ``Кα`` after ``ἔτους`` was read as regnal year 1.
MIXED = "ἔτους Кα Αὐτοκράτορος Καίσαρος Тίτου Αἰλίου Ἁδριανοῦ Ἀντωνίνου Σεβαστοῦ Εὐσεβοῦς anno domini"
EPIDOC_MACHINE = (
    '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="edition" xml:lang="grc">'
    "<ab>ἔτους &#x2045;ιβ&#x2046; Ἀντωνίνου Καίσαρος τοῦ κυρίου Μεσορὴ ε</ab></div></body></text></TEI>"
)
LINDIAN = (
    "Λίνδιοι ἐτίμασαν Ἀγησίστρατον Ἀγησιστράτου Λίνδιον χρυσέῳ στεφάνῳ ἀρετᾶς ἕνεκα καὶ εὐνοίας "
    "ἃν ἔχων διατελεῖ εἰς τὸν δᾶμον τὸν Λινδίων ἱερατεύσαντα Ἀθάνας Λινδίας καὶ Διὸς Πολιέως"
)
HERODOTUS = (
    "Ἡροδότου Ἁλικαρνησσέος ἱστορίης ἀπόδεξις ἥδε, ὡς μήτε τὰ γενόμενα ἐξ ἀνθρώπων τῷ χρόνῳ ἐξίτηλα "
    "γένηται, μήτε ἔργα μεγάλα τε καὶ θωμαστά, τὰ μὲν Ἕλλησι, τὰ δὲ βαρβάροισι ἀποδεχθέντα, ἀκλεᾶ γένηται"
)


def _flat(found) -> bool:
    return found.places[0].prob < 0.01 and found.high - found.low >= 1000 and found.formula is None


@pytest.mark.parametrize("text", ["α" * 49, RANDOM_WORD], ids=["repeated", "random-word"])
def test_text_unlike_greek_gets_flat_places_and_the_whole_range(text):
    found = attribute(text, parallels=False)
    assert _flat(found) and any(w.startswith("[W801]") for w in found.warnings)


def test_real_greek_is_not_strange():
    found = attribute("ἔτους ιβ Αὐτοκράτορος Καίσαρος Τραιανοῦ Ἁδριανοῦ Σεβαστοῦ Μεσορὴ ε", parallels=False)
    assert not any(w.startswith("[W801]") for w in found.warnings) and found.places[0].prob > 0.05


def test_beta_code_read_from_a_system_file_is_warned_and_not_dated():
    found = attribute(PASSWD, parallels=False)
    assert found.warnings[0].startswith("[W303]") and any(w.startswith("[W801]") for w in found.warnings)
    assert _flat(found)


def test_foreign_letters_are_warned_and_no_formula_is_read_from_their_fragments():
    found = attribute(MIXED, parallels=False)
    assert any(w.startswith("[W301]") and "Cyrillic" in w for w in found.warnings)
    assert found.formula is None  # 'ετους -α' is no regnal year 1


def test_an_epidoc_machine_reading_is_refused_as_restore_refuses_it():
    with pytest.raises(RequestError, match="E312"):
        attribute(EPIDOC_MACHINE, parallels=False)


def test_no_year_zero():
    edges = np.arange(-20, 21)
    probs = np.zeros(40)
    probs[19:22] = [0.3, 0.4, 0.3]  # the years -1, 0, 1 of the model's line
    year, low, high = date_summary(edges, probs)
    assert 0 not in (year, low, high) and low <= year <= high
    assert year_label(0) != "AD 0" and year_label(-1) == "1 BC" and year_label(1) == "AD 1"


def test_an_inscription_from_rhodes_may_come_from_elsewhere():
    """The Lindians are in none of the seven corpora: the answer says which places it can name."""
    found = attribute(LINDIAN, parallels=False)
    said = next(w for w in found.warnings if w.startswith("[W802]"))
    assert "Crete" in said and "Egypt" in said and "may come from elsewhere" in said
    assert sum(p.prob for p in found.places) <= 1 + 1e-3  # not capped: calibrated among the places it names


def test_a_literary_text_is_not_sure_of_a_place_unwarned():
    found = attribute(HERODOTUS, parallels=False)
    said = any(w.startswith("[W802]") for w in found.warnings)
    assert said or found.places[0].prob <= 0.5


def test_the_command_says_it_too():
    repeated = runner.invoke(app, ["attribute", "--no-parallels", "α" * 49])
    assert repeated.exit_code == 0 and "[W801]" in repeated.stderr
    mixed = runner.invoke(app, ["attribute", "--no-parallels", MIXED])
    assert mixed.exit_code == 0 and "[W301]" in mixed.stderr and "dating formula" not in mixed.stdout
    beta = runner.invoke(app, ["attribute", "--no-parallels", "--json", PASSWD])
    assert beta.exit_code == 0 and "[W303]" in beta.stderr and '"warnings"' in beta.stdout
    machine = runner.invoke(app, ["attribute", "--no-parallels", EPIDOC_MACHINE])
    assert machine.exit_code == 2 and "E312" in machine.output
    lindian = runner.invoke(app, ["attribute", "--no-parallels", LINDIAN])
    assert lindian.exit_code == 0 and "[W802]" in lindian.stderr
    common = runner.invoke(app, ["attribute", "--no-parallels", "ὁ στρατηγὸς ἐν τῇ διαγνώσει ἐκέλευσε τὸν [- - -] "
                                 "ἀποδοῦναι τὰ πρόβατα τῷ ἀδελφῷ"])  # fmt: skip
    assert common.exit_code == 0 and "διαγνωσει" not in common.stdout
