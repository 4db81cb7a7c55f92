"""Ensemble of restorers, the length prior, the backward n-gram, and model-folder loading."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data.normalise import letter_count
from apollo_restore.hint import NO_HINT, Hint
from apollo_restore.ngram.model import NgramModel
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.driver import restore_text
from apollo_restore.restoration.load import load_restorer
from apollo_restore.restoration.members.ensemble import Ensemble, LengthPrior
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.members.ngram import ReversedRestorer, load_ngram
from apollo_restore.restoration.ranking.pool import union
from apollo_restore.restoration.restorer import Restorer
from tests.stubs import Scored

from ..conftest import MEMORISED, PASSAGE_1, PASSAGE_2
from ..ranking import assert_same_ranking

#: the forward n-gram member of the test folders (ngram.npz in the folder)
NGRAM = {"name": "ngram", "weight": 1.0, "options": {"file": "ngram.npz"}}


def test_every_restorer_follows_the_one_protocol():
    assert isinstance(Scored({}), Restorer) and isinstance(LengthPrior(), Restorer)
    assert isinstance(Ensemble([(Scored({}), 1.0)]), Restorer)
    assert Ensemble([(Scored({}), 1.0)]).language_model() is None  # no neural member: nothing to report


def test_ensemble_reranks_union_by_weighted_scores():
    a = Scored({"αβγ": -1.0, "δεζ": -2.0})
    b = Scored({"δεζ": -0.5, "ηθι": -0.7})
    ens = Ensemble([(a, 1.0), (b, 1.0)])
    cands = ens.candidates("", "", NO_HINT, k=5)
    assert [c.text for c in cands] == ["δεζ", "ηθι", "αβγ"]  # -2.5, -30.7, -31.0
    assert cands[0].log_score == pytest.approx(-2.5 / 2)  # weighted mean over the two members
    assert sum(c.prob for c in cands) == pytest.approx(1.0)
    only_a = Ensemble([(a, 1.0), (b, 0.0)]).candidates("", "", NO_HINT, k=5)
    assert only_a[0].text == "αβγ"


def test_ensemble_ranking_does_not_depend_on_k():
    """γ is each member's second reading and the best of the union: when members proposed only
    k readings (before issue 23), k = 1 ranked α or β first."""
    a = Scored({"α": -1.0, "γ": -1.5, "β": -9.0})
    b = Scored({"β": -1.0, "γ": -1.5, "α": -9.0})
    ens = Ensemble([(a, 1.0), (b, 1.0)])
    full = ens.candidates("", "", NO_HINT, k=3)
    assert full[0].text == "γ" and sum(c.prob for c in full) == pytest.approx(1.0)
    for k in (1, 2):
        assert ens.candidates("", "", NO_HINT, k=k) == full[:k]


def test_length_prior_penalises_letters_outside_the_hint():
    prior = LengthPrior()
    assert prior.score_readings("", "", Hint.exact(4), ["αβγδ", "αβ γδ", "αβ", "αβγδεζ"]) == [0.0, 0.0, -2.0, -2.0]
    assert prior.score_readings("", "", Hint.span(3, 5), ["αβ", "αβγ", "αβγδεζ"]) == [-1.0, 0.0, -1.0]
    assert prior.score_readings("", "", NO_HINT, ["α"]) == [0.0]
    assert prior.candidates("", "", Hint.exact(3)) == []


@pytest.fixture(scope="module")
def ngram_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ngram")
    texts = [PASSAGE_1, PASSAGE_2] * 5
    forward = NgramModel.build(texts, order=6)
    forward.meta["direction"] = "forward"
    backward = NgramModel.build([t[::-1] for t in texts], order=6)
    backward.meta["direction"] = "backward"
    forward.save(folder / "fwd.npz")
    backward.save(folder / "bwd.npz")
    return folder


def test_backward_ngram_restores_memorised_word(ngram_files):
    bwd = load_ngram(ngram_files / "bwd.npz")
    assert isinstance(bwd, ReversedRestorer)
    for prefix, middle, suffix in MEMORISED:
        cands = bwd.candidates(prefix, suffix, Hint.exact(len(middle)))
        assert cands[0].text == middle
        assert all(letter_count(c.text) == len(middle) for c in cands)
        score = bwd.score_readings(prefix, suffix, NO_HINT, [middle])[0]
        assert score == pytest.approx(cands[0].log_score, abs=1e-6)


def test_load_restorer_builds_the_declared_ensemble(memorised_model, ngram_files, tmp_path):
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    shutil.copy(ngram_files / "fwd.npz", folder / "ngram.npz")
    shutil.copy(ngram_files / "bwd.npz", folder / "ngram-backward.npz")
    meta = json.loads((folder / "apollo_restore.json").read_text())
    meta["ensemble"] = {
        "members": [
            {"name": "neural", "weight": 0.5},
            {"name": "ngram", "weight": 1.0, "options": {"file": "ngram.npz"}},
            {"name": "ngram", "weight": 1.0, "options": {"file": "ngram-backward.npz"}},
            {"name": "length", "weight": 2.0},
        ]
    }
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    ens = load_restorer(folder)
    assert isinstance(ens.restorer, Ensemble) and len(ens.restorer.members) == 4
    assert isinstance(load_restorer(folder, neural_only=True).restorer, NeuralMember)
    assert isinstance(load_restorer(folder, present=False), Ensemble)
    result = restore_text(ens, "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ [.10] σοι κάμηλον θήλειαν")
    assert result.gaps[0].candidates[0].text == "πεπρακεναι"


def test_a_neural_member_weighted_zero_is_not_loaded(memorised_model, ngram_files, tmp_path):
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    shutil.copy(ngram_files / "fwd.npz", folder / "ngram.npz")
    meta = json.loads((folder / "apollo_restore.json").read_text())
    meta["ensemble"] = {"members": [NGRAM, {"name": "neural", "weight": 0.0}]}
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    ens = load_restorer(folder, present=False)
    assert callable(ens._neural) and [type(f).__name__ for f, _ in ens.members] == ["NgramRestorer"]
    model, tok = ens.language_model()  # loaded when a report asks for it: bits per character
    assert isinstance(ens.neural, NeuralMember) and model is ens.neural.model and tok is ens.neural.tok
    assert ens.members[0][0].language_model() is None


@pytest.mark.parametrize("missing", ["ngram.npz", "ngram-backward.npz"])
def test_load_restorer_fails_loudly_when_a_member_file_is_missing(memorised_model, ngram_files, tmp_path, missing):
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    for name, source in (("ngram.npz", "fwd.npz"), ("ngram-backward.npz", "bwd.npz")):
        if name != missing:
            shutil.copy(ngram_files / source, folder / name)
    meta = json.loads((folder / "apollo_restore.json").read_text())
    backward = {"name": "ngram", "weight": 1.0, "options": {"file": "ngram-backward.npz"}}
    meta["ensemble"] = {"members": [{"name": "neural", "weight": 1.0}, NGRAM, backward]}
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    with pytest.raises(FileNotFoundError) as err:
        load_restorer(folder)
    assert str(err.value).startswith("[E501]") and str(folder / missing) in str(err.value)
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E501]"), done.output
    assert isinstance(load_restorer(folder, neural_only=True).restorer, NeuralMember)  # asked for: neural only
    meta["ensemble"] = {"members": [{"name": "neural", "weight": 0.0}, {"name": "length", "weight": 1.0}]}
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=r"^\[E502\]"):  # nothing weighted that proposes readings
        load_restorer(folder)


def test_load_restorer_builds_the_unbounded_order_ensemble(memorised_model, tmp_path, monkeypatch):
    import shutil

    from apollo_restore.data.textindex import build_text_index
    from apollo_restore.restoration.members.infini import InfiniMember

    build_text_index(["a", "b"], ["ddb", "ddb"], [PASSAGE_1, PASSAGE_2], tmp_path / "ix")
    monkeypatch.setenv("APOLLO_RESTORE_INDEX", str(tmp_path / "ix"))
    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    meta = json.loads((folder / "apollo_restore.json").read_text())
    meta["ensemble"] = {
        "members": [
            {"name": "neural", "weight": 0.0},
            {"name": "infini", "weight": 1.0, "options": {"direction": "forward", "discount": 0.6}},
            {"name": "infini", "weight": 1.0, "options": {"direction": "backward", "discount": 0.6}},
            {"name": "length", "weight": 2.0},
        ]
    }
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    ens = load_restorer(folder, present=False)
    assert [type(f) for f, _ in ens.members] == [InfiniMember, InfiniMember, LengthPrior]
    assert ens.members[0][0].index is ens.members[1][0].index  # one text index, opened once
    result = restore_text(ens, "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ [.10] σοι κάμηλον θήλειαν")
    assert result.gaps[0].candidates[0].text == "πεπρακεναι"


def test_ensemble_with_slack_can_leave_a_wrong_hint():
    a = Scored({"αβγ": -1.0, "δεζηθ": -9.0})

    class LengthAware(Scored):
        def candidates(self, prefix, suffix, hint=NO_HINT, k=None):
            return [c for c in super().candidates(prefix, suffix, NO_HINT, k) if hint.contains(len(c.text))]

    strict = Ensemble([(LengthAware(a.scores), 1.0), (LengthPrior(), 1.0)], config=RestoreConfig(hint_slack=0))
    assert strict.candidates("", "", Hint.exact(5))[0].text == "δεζηθ"  # only the hinted length is searched
    slack = Ensemble([(LengthAware(a.scores), 1.0), (LengthPrior(), 1.0)], config=RestoreConfig(hint_slack=2))
    assert slack.candidates("", "", Hint.exact(5))[0].text == "αβγ"  # 2 letters short (−2) but far likelier (+8)
    forced = Ensemble(
        [(LengthAware(a.scores), 1.0), (LengthPrior(), 1.0)], config=RestoreConfig(exact_length=True, hint_slack=2)
    )
    assert [c.text for c in forced.candidates("", "", Hint.exact(5))] == ["δεζηθ"]  # --exact-length: no slack


def test_ensemble_scores_readings_on_the_scale_of_its_candidates():
    ens = Ensemble([(Scored({"αβγ": -1.0, "δεζ": -2.0}), 1.0), (Scored({"αβγ": -3.0}), 1.0), (LengthPrior(), 2.0)])
    cands = ens.candidates("", "", Hint.exact(3))
    assert ens.score_readings("", "", Hint.exact(3), [c.text for c in cands]) == pytest.approx(
        [c.log_score for c in cands]
    )


def test_ensemble_ranks_the_whole_union_with_every_reading_scored(memorised_model):
    # candidates rank the whole union of the members' proposals, every reading scored in full
    prefix, middle, suffix = MEMORISED[1]
    others = Scored({"αντωνινου": -9.0, "αντωνιου": -1.0, "καισαρος": -0.5, "ωρου": -2.0, "ετους": -0.1, "αβ": -0.2})
    proposed = [NeuralMember.load(memorised_model), others]
    pool = list(dict.fromkeys(c.text for f in proposed for c in f.candidates(prefix, suffix, Hint.exact(9))))
    full = Ensemble([(NeuralMember.load(memorised_model), 1.0), (others, 1.5), (LengthPrior(), 2.0)])
    scores = full.score_readings(prefix, suffix, Hint.exact(9), pool)
    cands = full.candidates(prefix, suffix, Hint.exact(9), k=4)
    ranked = sorted(zip(pool, scores), key=lambda item: -item[1])[:4]
    assert_same_ranking([(c.text, c.log_score) for c in cands], ranked)  # scored two ways: near ties may swap


def test_union_merges_readings_by_identity_keeping_the_first_spelling_and_every_proposer():
    readings, origins = union([("neural", ["και ", "κατα"]), ("infini", ["και", "μετα", "κατα"])])
    assert readings == ["και ", "κατα", "μετα"]
    assert origins == [["neural", "infini"], ["neural", "infini"], ["infini"]]


def test_the_neural_member_widens_the_hint_itself_and_the_others_are_given_it_widened():
    """The neural member searches ``hint_slack`` letters beyond the hint as given, paying its
    per-letter penalty outside it, so its readings favour the hinted length; every other member
    is given the hint widened by the slack."""
    seen: dict[str, list[Hint]] = {"neural": [], "other": []}

    class Recording(Scored):
        def __init__(self, scores, name):
            super().__init__(scores)
            self.label = name

        def candidates(self, prefix, suffix, hint=NO_HINT, k=None):
            seen[self.label].append(hint)
            return super().candidates(prefix, suffix, hint, k)

    neural, other = Recording({"αβγ": -1.0}, "neural"), Recording({"δεζ": -2.0}, "other")
    neural.kind = "neural"  # what it declares, not which object it is, makes it the neural member
    Ensemble([(neural, 1.0), (other, 1.0), (LengthPrior(), 2.0)], config=RestoreConfig(hint_slack=5)).candidates(
        "", "", Hint.exact(7)
    )
    assert seen == {"neural": [Hint.exact(7)], "other": [Hint.span(2, 12)]}


def test_the_shipped_neural_member_searches_the_folders_slack():
    ens = load_restorer(present=False)
    slack = ens.config.hint_slack
    assert slack > 0 and ens.neural.config.hint_slack == slack
    found = ens.neural.candidates("ετους δευτερου και εικοστου ", " καισαρος του κυριου", Hint.exact(9))
    assert {letter_count(c.text) for c in found} <= set(range(9 - slack, 9 + slack + 1))


def _folder_with_search(memorised_model, ngram_files, tmp_path, **search):
    """A copy of the memorised model with an n-gram ensemble entry holding ``search`` settings."""
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    shutil.copy(ngram_files / "fwd.npz", folder / "ngram.npz")
    meta = json.loads((folder / "apollo_restore.json").read_text())
    meta["ensemble"] = {"members": [{"name": "neural", "weight": 1.0}, NGRAM]}
    if search:
        meta["ensemble"]["search"] = search
    (folder / "apollo_restore.json").write_text(json.dumps(meta))
    return folder


def test_a_model_folder_sets_the_neural_beam_width_unless_the_caller_does(memorised_model, ngram_files, tmp_path):
    folder = _folder_with_search(memorised_model, ngram_files, tmp_path, beam_width=40, hint_slack=3)
    ens = load_restorer(folder, present=False)
    assert (ens.neural.config.beam_width, ens.neural.config.hint_slack, ens.config.hint_slack) == (40, 3, 3)
    assert load_restorer(folder, RestoreConfig(beam_width=7), present=False).neural.config.beam_width == 7
    bare = load_restorer(_folder_with_search(memorised_model, ngram_files, tmp_path / "b"), present=False)
    default = RestoreConfig()  # no "search" entry: the one default of the search settings
    assert bare.neural.config.beam_width is None and bare.config.hint_slack == default.hint_slack


def test_a_model_folder_sets_the_neural_precision_unless_the_caller_does(memorised_model, ngram_files, tmp_path):
    from apollo_restore.model.lean import Int8Weight

    folder = _folder_with_search(memorised_model, ngram_files, tmp_path, precision="int8")
    ens = load_restorer(folder, present=False)
    assert ens.neural.config.precision == "int8" and isinstance(ens.neural.lean.head, Int8Weight)
    plain = load_restorer(folder, RestoreConfig(precision="fp32"), present=False).neural
    assert isinstance(plain.lean.head, torch.Tensor)
    gap = ("ετους δευτερου και εικοστου ", " καισαρος του κυριου", Hint.exact(5))
    quick, exact = ens.neural.candidates(*gap), plain.candidates(*gap)
    assert quick and {c.text for c in quick[:3]} & {c.text for c in exact[:5]}  # the same model, coarser sums


def test_the_shipped_default_keeps_a_wider_neural_beam_than_its_pool():
    ens = load_restorer(present=False)
    assert ens.neural.config.beam_width > ens.neural.config.pool


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("beam_width", 0), ("beam_width", "40"), ("beam_width", True), ("hint_slack", -1), ("hint_slack", 2.5),
        ("precision", "int4"), ("precision", 8),
    ],
)  # fmt: skip
def test_a_bad_search_setting_of_a_model_folder_is_e505_naming_it(memorised_model, ngram_files, tmp_path, name, value):
    from apollo_restore.errors import ModelFolderError

    folder = _folder_with_search(memorised_model, ngram_files, tmp_path, **{name: value})
    with pytest.raises(ModelFolderError) as err:
        load_restorer(folder)
    message = str(err.value)
    assert message.startswith("[E505]") and f"ensemble.search.{name}" in message and "apollo_restore.json" in message
    done = CliRunner().invoke(app, ["restore", "καὶ [.3] τοῦ θεοῦ", "--model", str(folder)])
    assert done.exit_code == 2 and done.output.startswith("error: [E505]"), done.output
