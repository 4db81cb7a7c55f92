"""Ensemble members registered by name: the model folder's member list checked at load, the
registry's kinds, the shipped folder in the new format, and the tuner's weight writer."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.errors import ModelFolderError
from apollo_restore.hint import NO_HINT
from apollo_restore.ngram.model import NgramModel
from apollo_restore.restoration.config import DEFAULT_MODEL, RestoreConfig
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.ensemble import Ensemble
from apollo_restore.restoration.members.infini import InfiniMember
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.members.registry import (
    _FACTORIES,
    build_member,
    known_members,
    member_class,
    member_entries,
    member_options,
    member_words,
    register_member,
    write_member_weights,
)
from apollo_restore.restoration.restorer import candidates_many
from apollo_restore.schema.folder import InfiniOptions, MemberEntry, NoOptions
from apollo_restore.schema.restoration import Candidate

from ..conftest import PASSAGE_1, PASSAGE_2

GOOD = [
    {"name": "neural", "weight": 1.0},
    {"name": "ngram", "weight": 1.0, "options": {"file": "ngram.npz"}},
    {"name": "length", "weight": 2.0},
    {"name": "copy", "weight": 0.2},
    {"name": "words", "weight": 0.1, "options": {"vocabulary": False}},
]


@pytest.fixture(scope="module")
def ngram_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("ngram") / "ngram.npz"
    NgramModel.build([PASSAGE_1, PASSAGE_2] * 5, order=6).save(path)
    return path


@pytest.fixture
def folder(memorised_model, ngram_file, tmp_path):
    """A copy of the memorised model with an n-gram file; :func:`write` sets its ensemble entry."""
    out = tmp_path / "model"
    shutil.copytree(memorised_model, out)
    shutil.copy(ngram_file, out / "ngram.npz")
    return out


def write(folder, ensemble) -> None:
    meta = json.loads((folder / "apollo_restore.json").read_text())
    meta["ensemble"] = ensemble
    (folder / "apollo_restore.json").write_text(json.dumps(meta))  # NaN and Infinity as JSON writes them


def load_error(folder) -> str:
    with pytest.raises(ModelFolderError) as err:
        load_restorer(folder)
    return str(err.value)


def test_the_registry_knows_the_shipped_members_and_refuses_a_second_registration():
    assert {"neural", "infini", "ngram", "length", "copy", "words"} <= set(known_members())
    with pytest.raises(ValueError, match="registered already"):
        register_member("infini", InfiniMember)(lambda spec: None)


def _member(**declared) -> type:
    base = {"kind": "classical", "batches": False, "options": NoOptions, "in_words": "an oracle"}
    return type("Oracle", (), {k: v for k, v in {**base, **declared}.items() if v is not ...})


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"kind": ...}, "declares kind None"),
        ({"kind": "oracle"}, "declares kind 'oracle'"),
        ({"batches": ...}, "no class attribute batches"),
        ({"batches": None}, "no class attribute batches"),
        ({"options": dict}, "no class attribute options"),
        ({"in_words": ...}, "no class attribute in_words"),
    ],
)
def test_a_member_class_declares_its_kind_batching_options_and_words(declared, message):
    with pytest.raises(TypeError, match=message):
        register_member("oracle", _member(**declared))
    assert "oracle" not in known_members()


def test_the_registry_and_the_schema_read_a_member_from_its_class():
    assert member_class("neural") is NeuralMember and (NeuralMember.kind, NeuralMember.batches) == ("neural", True)
    assert (member_class("infini").kind, member_class("infini").batches) == ("classical", False)
    assert member_options()["infini"] is InfiniOptions is InfiniMember.options
    assert member_words("infini_backward") == member_words("infini") == InfiniMember.in_words
    assert member_words("oracle") is None


class _Undeclared:
    """A member class that declares neither its kind nor whether it batches."""

    name = "undeclared"

    def candidates(self, prefix, suffix, hint=NO_HINT, k=None):
        return []

    def score_readings(self, prefix, suffix, hint, readings):
        return [0.0] * len(readings)

    def language_model(self):
        return None


class _Declared(_Undeclared):
    kind = "classical"
    batches = False


@pytest.mark.parametrize(
    ("member", "message"),
    [(_Undeclared(), "declares kind None"), (type("_NoBatches", (_Undeclared,), {"kind": "classical"})(), "batches")],
)
def test_a_member_built_without_its_declarations_is_refused(tmp_path, member, message):
    register_member("undeclared-test", _member())(lambda spec: member)
    try:
        entry = MemberEntry(name="undeclared-test", weight=1.0).at("ensemble.members[0]")
        with pytest.raises(TypeError, match=message):
            build_member(tmp_path, entry, RestoreConfig())
    finally:
        del _FACTORIES["undeclared-test"]  # the registry is module state: leave it as found


def test_an_ensemble_refuses_a_member_that_declares_no_kind():
    with pytest.raises(TypeError, match="declares kind None"):
        Ensemble([(_Declared(), 1.0), (_Undeclared(), 1.0)])
    assert Ensemble([(_Declared(), 1.0)]).kinds == ["classical"]


def test_batching_is_what_a_restorer_declares_never_a_method_found_by_name():
    class Many(_Declared):
        calls: list[str] = []

        def candidates(self, prefix, suffix, hint=NO_HINT, k=None):
            self.calls.append("one")
            return [Candidate(prefix, 1.0, 0.0)]

        def candidates_many(self, gaps, k=None):
            self.calls.append("many")
            return [[Candidate(prefix, 1.0, 0.0)] for prefix, _, _ in gaps]

    gaps = [("α", "", NO_HINT), ("β", "", NO_HINT)]
    quiet = Many()
    assert candidates_many(quiet, gaps) == [[Candidate("α", 1.0, 0.0)], [Candidate("β", 1.0, 0.0)]]
    assert quiet.calls == ["one", "one"]  # declares batches = False: its candidates_many is not used
    loud = type("Loud", (Many,), {"batches": True, "calls": []})()
    candidates_many(loud, gaps)
    assert loud.calls == ["many"]


def test_a_folder_builds_its_listed_members_each_of_its_declared_kind(folder):
    write(folder, {"members": GOOD, "search": {"hint_slack": 1}})
    ens = load_restorer(folder, present=False)
    assert [f.kind for f, _ in ens.members] == ["neural", "classical", "prior", "document", "document"]
    assert [w for _, w in ens.members] == [1.0, 1.0, 2.0, 0.2, 0.1]
    assert ens.config.hint_slack == 1 and ens.neural is ens.members[0][0]


def test_only_the_language_models_weights_form_the_denominator_of_the_mean():
    class Constant:
        batches = False

        def __init__(self, kind: str, score: float):
            self.kind, self.name, self.score = kind, kind, score

        def candidates(self, prefix, suffix, hint=NO_HINT, k=None):
            return []

        def score_readings(self, prefix, suffix, hint, readings):
            return [self.score] * len(readings)

        def language_model(self):
            return None

    members = [("neural", -2.0, 1.0), ("classical", -4.0, 1.0), ("prior", -1.0, 8.0), ("document", 3.0, 2.0)]
    ens = Ensemble([(Constant(kind, score), weight) for kind, score, weight in members])
    assert ens.score_readings("", "", NO_HINT, ["α"]) == pytest.approx([(-2.0 - 4.0 - 8.0 + 6.0) / 2.0])


@pytest.mark.parametrize("weight", [math.nan, math.inf, -0.5, "1.0", True, None])
def test_a_weight_that_is_not_a_finite_number_of_at_least_0_is_e505_naming_the_field(folder, weight):
    members = [dict(m) for m in GOOD]
    members[2]["weight"] = weight
    write(folder, {"members": members})
    message = load_error(folder)
    assert message.startswith("[E505]") and "ensemble.members[2].weight" in message
    assert str(folder / "apollo_restore.json") in message
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E505]"), done.output


def test_an_unknown_member_is_e521_listing_the_known_ones(folder):
    write(folder, {"members": [*GOOD, {"name": "oracle", "weight": 1.0}]})
    message = load_error(folder)
    assert message.startswith("[E521]") and "ensemble.members[5].name" in message and "'oracle'" in message
    assert all(name in message for name in known_members())


NEURAL = {"name": "neural", "weight": 1.0}


@pytest.mark.parametrize(
    ("ensemble", "field", "option"),
    [
        ({"members": [{"name": "infini", "weight": 1.0, "options": {"order": 5}}]}, "members[0].options", "'order'"),
        ({"members": [{"name": "length", "weight": 1.0, "options": {"slope": 2}}]}, "members[0].options", "'slope'"),
        ({"members": [{**NEURAL, "weights": 2}]}, "members[0]", "'weights'"),
        ({"members": [NEURAL], "hint_slack": 5}, "ensemble", "'hint_slack'"),  # a search setting outside "search"
        ({"members": [NEURAL], "search": {"beam": 5}}, "ensemble.search", "'beam'"),
    ],
)
def test_an_option_a_member_or_the_entry_does_not_take_is_e522(folder, ensemble, field, option):
    write(folder, ensemble)
    message = load_error(folder)
    assert message.startswith("[E522]") and field in message and option in message


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"direction": "sideways"}, "options.direction"),
        ({"discount": "0.6"}, "options.discount"),
        ({"max_context": 0}, "options.max_context"),
    ],
)
def test_an_option_of_the_wrong_type_is_e505_naming_it(folder, options, field):
    write(folder, {"members": [{"name": "infini", "weight": 1.0, "options": options}]})
    message = load_error(folder)
    assert message.startswith("[E505]") and f"ensemble.members[0].{field}" in message


def test_an_old_format_entry_is_e520_saying_how_to_write_it(folder):
    write(folder, {"ngram": "ngram.npz", "weights": {"neural": 1.0, "ngram": 1.0}})
    message = load_error(folder)
    assert message.startswith("[E520]") and '"members"' in message
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E520]"), done.output


def test_the_shipped_folder_lists_its_members_by_name_with_a_pointer_to_how_they_were_chosen():
    meta = json.loads((DEFAULT_MODEL / "apollo_restore.json").read_text())
    entries = member_entries(DEFAULT_MODEL, meta["ensemble"], RestoreConfig())
    weights = {e.label: e.weight for e in entries}
    assert weights == {"neural": 1.0, "infini": 1.0, "infini_backward": 0.5, "copy": 0.2, "words": 0.1, "length": 8.0}
    assert meta["ensemble"]["search"] == {"hint_slack": 5, "beam_width": 40, "precision": "int8"}
    pointer = meta["ensemble"]["chosen_by"]
    assert len(pointer) < 200 and (DEFAULT_MODEL.parents[3] / pointer.split()[0]).is_file()


def test_write_member_weights_sets_them_by_label_and_keeps_the_rest(folder):
    write(folder, {"members": GOOD, "search": {"hint_slack": 1}, "chosen_by": "x"})
    write_member_weights(folder, {"length": 4.0, "copy": 0.0})
    ensemble = json.loads((folder / "apollo_restore.json").read_text())["ensemble"]
    assert [m["weight"] for m in ensemble["members"]] == [1.0, 1.0, 4.0, 0.0, 0.1]
    assert ensemble["search"] == {"hint_slack": 1} and ensemble["chosen_by"] == "x"
    assert ensemble["members"][1]["options"] == {"file": "ngram.npz"}
    before = (folder / "apollo_restore.json").read_bytes()
    with pytest.raises(ValueError, match="no ensemble member 'infini'"):
        write_member_weights(folder, {"infini": 1.0})
    with pytest.raises(ModelFolderError, match=r"^\[E505\]"):
        write_member_weights(folder, {"length": math.nan})
    assert (folder / "apollo_restore.json").read_bytes() == before  # a refused write changes nothing
    assert not list(folder.glob("*.tmp"))


def test_the_backward_member_has_one_spelling_and_old_records_still_read(tmp_path):
    """The backward infini member runs under its folder label (``infini_backward``, not
    ``infini-backward``); a calibration recorded with the old run name still describes its scores."""
    from apollo_restore.restoration.members.infini import InfiniMember
    from apollo_restore.restoration.ranking.calibration import Calibration, Scoring, mismatch
    from apollo_restore.schema.folder import BACKWARD, CONDITIONS, GAP_KINDS, Scaling

    class Backward:
        reverse = True

    assert InfiniMember(Backward(), None).name == f"infini{BACKWARD}" == "infini_backward"
    scoring = Scoring("f" * 16, "neural+infini+infini_backward", "fp32")
    old = {**scoring.record(), "members": "neural+infini+infini-backward"}
    scalings = {cond: Scaling() for cond in CONDITIONS}
    cal = Calibration(scalings, 0.0, dict(old), dict(scalings), {kind: dict(old) for kind in GAP_KINDS})
    assert mismatch(cal, tmp_path, scoring) is None
    other = Calibration(scalings, 0.0, {**old, "members": "neural+infini"}, dict(scalings), {})
    assert "fitted on the scores of neural+infini" in mismatch(other, tmp_path, scoring)
