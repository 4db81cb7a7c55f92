"""``apollo-restore tune``: a tiny end-to-end fit written into a copy of a model folder and read
back by the product, its refusals, and its searches on hand-made pools."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data.formats import GapExample
from apollo_restore.hint import Hint
from apollo_restore.model.folder import META_FILE
from apollo_restore.ngram.model import NgramModel
from apollo_restore.restoration.load import calibration_for, load_restorer, scoring_of
from apollo_restore.restoration.members.ensemble import Ensemble
from apollo_restore.restoration.ranking.demotions import Demotions
from apollo_restore.schema.restoration import Candidate
from apollo_restore.tune.demotions import fit_demotions
from apollo_restore.tune.weights import Scored, fit_weights

from ..conftest import PASSAGE_1, PASSAGE_2

WEIGHTS = {"neural": 1.0, "ngram": 1.0, "length": 2.0, "copy": 0.0}


@pytest.fixture
def ensemble_folder(memorised_model, tmp_path):
    """A copy of the memorised model with an ensemble entry: the neural model, an n-gram file, the
    length prior and the document copier (weighted 0)."""
    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    model = NgramModel.build([PASSAGE_1, PASSAGE_2] * 5, order=6)
    model.meta["direction"] = "forward"
    model.save(folder / "ngram.npz")
    meta = json.loads((folder / META_FILE).read_text())
    options = {"ngram": {"file": "ngram.npz"}}
    members = [
        {"name": n, "weight": w, **({"options": options[n]} if n in options else {})} for n, w in WEIGHTS.items()
    ]
    meta["ensemble"] = {"members": members, "search": {"hint_slack": 2}}
    (folder / META_FILE).write_text(json.dumps(meta))
    return folder


@pytest.fixture
def supplied_prepared(tmp_path):
    """The tiny corpus whose validation document has four editor supplements (its first words)."""
    from apollo_restore.data.table import write_documents

    from ..conftest import document_row

    text = PASSAGE_2 + " " + PASSAGE_1
    starts = [text.index(w) for w in ("δευτερου", "αντωνινου", "κυριου", "δραχμας")]
    spans = {"supplied_start": starts, "supplied_end": [s + 5 for s in starts]}
    rows = [document_row(f"t{i}", (PASSAGE_1 if i % 2 else PASSAGE_2) + " " + PASSAGE_1, "train") for i in range(6)]
    rows += [document_row("v0", text, "validation", **spans), document_row("x0", PASSAGE_1, "test")]
    (tmp_path / "prepared").mkdir()
    write_documents(rows, tmp_path / "prepared" / "documents.parquet")
    return tmp_path / "prepared"


def _tune(*args: str):
    return CliRunner().invoke(app, ["tune", *args])


@pytest.mark.slow
def test_tune_writes_what_it_fits_and_the_product_reads_it_back(ensemble_folder, tiny_prepared):
    # 12 gaps of the 60 (20 letter counts × exact, range, none): the tiny model searches each twice
    args = ["--model", str(ensemble_folder), "--prepared", str(tiny_prepared), "--per-length", "1", "--limit", "12"]
    args += ["--min-gaps", "2", "--real-lacunae", "0"]  # a tiny fit, to test the writing (the product's floor: 50)
    before = (ensemble_folder / META_FILE).read_bytes()
    refused = _tune(*args)  # the folder holds ensemble weights: nothing replaced without --force
    assert refused.exit_code == 2 and "[E701]" in refused.output and "ensemble weights" in refused.output
    assert (ensemble_folder / META_FILE).read_bytes() == before

    result = _tune(*args, "--force")
    assert result.exit_code == 0, result.output
    assert "fitted on 12 validation gaps" in result.output
    meta = json.loads((ensemble_folder / META_FILE).read_text())
    weights = {m["name"]: m["weight"] for m in meta["ensemble"]["members"]}
    slack = meta["ensemble"]["search"]["hint_slack"]
    assert weights.keys() == WEIGHTS.keys() and weights["neural"] == WEIGHTS["neural"] and slack == 2
    assert meta["ensemble"]["chosen_by"].startswith("apollo-restore tune")
    demotions = meta["presentation"]["demotions"]
    assert demotions.keys() == {"truncated", "repeat", "hint_miss", "count_floor"}
    assert all(v is None or 0 < v <= 1 for v in demotions.values())

    calibration = calibration_for(ensemble_folder, scoring_of(ensemble_folder))  # fitted on the folder as written
    assert calibration is not None and calibration.info["fitted_by"] == "apollo-restore tune"
    assert calibration.info["gaps"] == 12 and set(calibration.conditions) <= {"exact", "range", "none"}

    shown = load_restorer(ensemble_folder)
    assert shown.ranking.demotions == Demotions(**demotions)
    assert shown.ranking.calibration is not None and shown.ranking.calibration.conditions == calibration.conditions
    assert isinstance(shown.restorer, Ensemble) and shown.restorer.config.hint_slack == slack
    assert sorted(w for _, w in shown.restorer.members) == sorted(w for w in weights.values() if w > 0)
    cands = shown.candidates(PASSAGE_2[:28], PASSAGE_2[37:], Hint.exact(9))
    assert cands and all(c.calibrated for c in cands) and sum(c.prob for c in cands) <= 1 + 1e-9


@pytest.mark.slow
def test_tune_fits_real_lacunae_and_synthetic_gaps_each_their_own(ensemble_folder, supplied_prepared):
    args = ["--model", str(ensemble_folder), "--prepared", str(supplied_prepared), "--per-length", "1"]
    args += ["--limit", "12", "--what", "calibration", "--force"]
    refused = _tune(*args, "--min-gaps", "5")  # 4 supplements, each under 3 conditions
    assert refused.exit_code == 2 and "[E704]" in refused.output and "4 real exact" in refused.output
    assert not (ensemble_folder / "calibration.json").exists()
    args += ["--min-gaps", "2"]
    result = _tune(*args)
    assert result.exit_code == 0, result.output
    data = json.loads((ensemble_folder / "calibration.json").read_text())
    assert data["format"] == "apollo_restore calibration.v2"
    assert set(data["kinds"]) == {"real", "synthetic", "literary"}  # literary texts: the synthetic gaps' fit
    assert data["kinds"]["real"] != data["kinds"]["synthetic"]  # each kind fitted on its own gaps
    assert data["kinds"]["literary"] == data["kinds"]["synthetic"]
    info = data["info"]
    assert info["gaps"] == 12 + 12 and info["synthetic"]["gaps"] == 12 and "real lacunae ddb=100" in info["sources"]
    assert info["gaps_per_condition"]["real exact"] == 4
    shown = load_restorer(ensemble_folder)
    assert shown.ranking.calibration is not None and shown.ranking.kind == "real"


def test_tune_refuses_weights_of_a_folder_without_an_ensemble(memorised_model, tiny_prepared, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(memorised_model, folder)
    result = _tune("--model", str(folder), "--prepared", str(tiny_prepared), "--what", "weights", "--force")
    assert result.exit_code == 2 and "[E702]" in result.output and "Traceback" not in result.output


def test_tune_refuses_a_corpus_without_validation_gaps_of_the_source(ensemble_folder, tiny_prepared):
    args = ["--model", str(ensemble_folder), "--prepared", str(tiny_prepared), "--source", "dclp", "--force"]
    result = _tune(*args, "--what", "demotions")
    assert result.exit_code == 2 and "[E703]" in result.output and "dclp" in result.output


def test_tune_refuses_an_unknown_step(ensemble_folder, tiny_prepared, cli_error):
    result = _tune("--model", str(ensemble_folder), "--prepared", str(tiny_prepared), "--what", "weights,length")
    assert result.exit_code == 2 and "length" in cli_error(result)


def test_fit_weights_finds_the_member_that_ranks_the_answers_first():
    # member "good" scores each answer highest, "bad" a wrong reading; the folder starts with "bad" strong
    targets = ["αβγδε"[: n % 5 + 1] + "ζ" * (n // 5) for n in range(1, 21)]
    gaps = [GapExample(f"g{t}", "ddb", "d", "", "", t, Hint.exact(len(t))) for t in targets]
    kinds = {"good": "classical", "bad": "classical"}
    rows = [Scored([t, "ωω"], {"good": [-1.0, -2.0], "bad": [-5.0, -1.0]}, kinds) for t in targets]
    weights, value = fit_weights(rows, gaps, {"good": 1.0, "bad": 8.0})
    assert weights["good"] == 1.0 and weights["bad"] < 0.25 and value[0] == 1.0
    kept, _ = fit_weights(rows, gaps, {"good": 1.0, "bad": 0.1})  # already right: nothing changes
    assert kept == {"good": 1.0, "bad": 0.1}


def test_fit_demotions_demotes_the_doubt_that_hides_the_answers():
    targets = ["αβγδεζηθικλμνξοπρστυ"[:n] for n in range(1, 21)]
    gaps = [GapExample(f"g{t}", "ddb", "d", "", "", t, Hint.exact(len(t))) for t in targets]
    # the first reading repeats the context (flag 2) and is wrong; the answer comes second
    pools = [[(Candidate("ωω", 0.6, -1.0), (False, True, False)), (Candidate(t, 0.4, -2.0), (False, False, False))]
             for t in targets]  # fmt: skip
    start = Demotions(truncated=1.0, repeat=1.0, hint_miss=1.0)
    found, value = fit_demotions(pools, gaps, start)
    assert found.repeat * 0.6 < 0.4 and value[0] == 1.0
    assert found.truncated == 1.0 and found.hint_miss == 1.0  # no reading has those doubts: ties keep the start


def test_the_clis_copies_of_the_steps_and_the_gap_floor_are_tunes():
    """``apollo-restore tune`` spells them out so that ``--help`` loads no torch: they must agree."""
    from apollo_restore.cli import tune as cli
    from apollo_restore.tune.folder import STEPS
    from apollo_restore.tune.run import MIN_GAPS, REAL_LACUNAE

    assert (cli.STEPS, cli.MIN_GAPS, cli.REAL_LACUNAE) == (STEPS, MIN_GAPS, REAL_LACUNAE)
