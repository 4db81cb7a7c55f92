"""The report folder, end to end, and the ``evaluate`` / ``gaps`` commands."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from apollo_restore.cli.app import app
from apollo_restore.data.formats import Prediction, read_gapset, read_predictions, write_predictions
from apollo_restore.evaluate.gapsets import build_synthetic, build_true_lacunae
from apollo_restore.evaluate.pipeline import evaluate_to_folder
from apollo_restore.evaluate.report import render_markdown
from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.restoration.config import RestoreConfig
from apollo_restore.restoration.members.ensemble import Ensemble, LengthPrior
from apollo_restore.restoration.members.neural import NeuralMember
from apollo_restore.restoration.presentation.present import Presented


def test_report_folder_for_tiny_random_model(toy_table, tmp_path):
    tok = CharTokenizer()
    restorer = NeuralMember(
        build_model("tiny", tok, seed=0).eval(), tok, "tiny-random", RestoreConfig(k=3, max_chars=6)
    )
    gaps = build_synthetic(
        toy_table,
        "ddb",
        "test",
        1,
        ["exact", "none"],
        range(1, 2),
        seed=0,
        context_chars=40,
        uncertain_excluded=["exact"],
    )
    gaps += build_true_lacunae(toy_table, "ddb", "test", limit=1, context_chars=40)
    peer = [Prediction(g.id, [(g.target, None)]) for g in gaps]  # a perfect peer
    out = tmp_path / "report"
    metrics = evaluate_to_folder(out, restorer, gaps, k=3, peers={"oracle": peer}, bpc_table=toy_table, bpc_windows=1,
                                 name="tiny-random", progress=False)  # fmt: skip
    for name in (
        "report.md",
        "metrics.json",
        "gaps.jsonl",
        "predictions.jsonl",
        "per_length_ddb.png",
        "peers_per_length_ddb.png",
    ):
        assert (out / name).stat().st_size > 0, name
    assert len(read_predictions(out / "predictions.jsonl")) == len(gaps) == metrics["gaps"]
    assert read_gapset(out / "gaps.jsonl") == gaps
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["meta"]["model"] == "tiny-random" and saved["meta"]["bpc_mode"] == "prefix"
    assert set(saved["groups"]) == {"synthetic", "true"} and "ddb" in saved["bpc"]
    assert saved["peers"]["gaps"] == len(gaps)
    text = (out / "report.md").read_text()
    for heading in (
        "Headline",
        "Hint robustness",
        "Agreement with editors",
        "Bits per character",
        "Uncertain-included",
        "Per gap length",
        "Side by side",
    ):
        assert heading in text, heading
    assert "no gaps of length 2, 3" in text  # missing lengths are reported and skipped


@pytest.mark.slow
def test_report_bpc_of_an_ensemble_is_its_neural_model(toy_table, tmp_path):
    tok = CharTokenizer()
    neural = NeuralMember(build_model("tiny", tok, seed=0).eval(), tok, "tiny-random", RestoreConfig(k=3, max_chars=6))
    ensemble = Ensemble([(neural, 1.0), (LengthPrior(), 1.0)], name="tiny+prior", neural=neural)
    gaps = build_synthetic(
        toy_table, "ddb", "test", 1, ["exact"], range(1, 2), seed=0, context_chars=40, uncertain_excluded=[]
    )
    perfect = [Prediction(g.id, [(g.target, 1.0)]) for g in gaps]  # no search: only bits per character runs the model
    args = dict(gaps=gaps, k=3, predictions=perfect, bpc_table=toy_table, bpc_windows=1, progress=False)
    alone = evaluate_to_folder(tmp_path / "neural", neural, **args)
    metrics = evaluate_to_folder(tmp_path / "ensemble", ensemble, **args)
    assert metrics["bpc"] == alone["bpc"] and "ddb" in metrics["bpc"]  # the shipped model is an ensemble
    # as the CLI loads it: presented (edition forms, calibration) around the ensemble
    presented = evaluate_to_folder(tmp_path / "presented", Presented(ensemble), **args)
    assert presented["bpc"] == alone["bpc"]
    # no neural model behind the restorer: said, not silently left out
    classical = evaluate_to_folder(tmp_path / "classical", Ensemble([(LengthPrior(), 1.0)]), **args)
    assert "bpc" not in classical and classical["meta"]["bpc_skipped"].startswith("no neural language model")


def test_report_markdown_without_optional_parts():
    text = render_markdown({"gaps": 0, "groups": {}})
    assert text.startswith("# Evaluation report")


@pytest.fixture
def runner():
    return CliRunner()


def test_report_cli_gaps_and_evaluate_from_predictions(toy_prepared, tmp_path, runner):
    gapset = tmp_path / "gaps.jsonl"
    result = runner.invoke(app, ["gaps", "--prepared", str(toy_prepared), "--split", "test", "--source", "ddb",
                                 "--per-length", "1", "--conditions", "exact,wrong100", "--true-lacunae", "2",
                                 "--out", str(gapset), "--cullhed-out", str(tmp_path / "c.jsonl"),
                                 "--ithaca-out", str(tmp_path / "i.jsonl")])  # fmt: skip
    assert result.exit_code == 0, result.output
    gaps = read_gapset(gapset)
    assert len(gaps) == 20 * 3 + 4 and (tmp_path / "c.jsonl").exists() and (tmp_path / "i.jsonl").exists()
    preds = tmp_path / "preds.jsonl"
    write_predictions(preds, [Prediction(g.id, [(g.target, 1.0)], 1.0) for g in gaps])
    out = tmp_path / "rep"
    result = runner.invoke(app, ["evaluate", "--gaps", str(gapset), "--predictions", str(preds), "--out", str(out),
                                 "--peer", f"again={preds}"])  # fmt: skip
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["groups"]["synthetic"]["included"]["exact"]["ddb"]["uniform"]["top1"] == 1.0
    assert metrics["groups"]["true"]["included"]["exact"]["ddb"]["all"]["top20"] == 1.0
    assert metrics["peers"]["head_to_head"]["predictions vs again"]["both"] == len(gaps)


def test_report_cli_evaluate_needs_gaps_or_prepared(tmp_path, runner, cli_error):
    result = runner.invoke(app, ["evaluate", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert cli_error(result) == "Invalid value for --gaps: give --gaps FILE or --prepared DIR with --source"


def test_report_cli_evaluate_unknown_condition(toy_prepared, tmp_path, runner, cli_error):
    result = runner.invoke(
        app,
        [
            "gaps",
            "--prepared",
            str(toy_prepared),
            "--source",
            "ddb",
            "--conditions",
            "exactish",
            "--out",
            str(tmp_path / "g.jsonl"),
        ],
    )
    assert result.exit_code == 2
    choices = "exact, range, wrong10, wrong50, wrong100, none"
    assert cli_error(result) == f"Invalid value for --conditions: unknown condition(s) exactish; choose from {choices}"


def test_report_cli_gaps_source_missing_from_split(toy_prepared, tmp_path, runner):
    result = runner.invoke(
        app, ["gaps", "--prepared", str(toy_prepared), "--source", "literary", "--out", str(tmp_path / "g.jsonl")]
    )
    assert (result.exit_code, result.output) == (
        2,
        f"error: no test documents of source 'literary' in {toy_prepared}\n",
    )


@pytest.mark.slow
def test_report_cli_evaluate_with_workers_scores_what_one_process_scores(tmp_path, runner):
    # the embedded model, neural member alone, in two spawned processes against one
    rows = [
        {"id": f"g{i}", "source": "ddb", "doc": "d", "prefix": prefix, "suffix": suffix, "target": target, "hint": n}
        for i, (prefix, target, suffix, n) in enumerate(
            [
                ("ετους δευτερου και ", "εικοστου", " καισαρος του κυριου", 8),
                ("και ομολογει ο", "μοσ", "ν απο κωμης", None),
            ]
        )
    ]
    gapset = tmp_path / "gaps.jsonl"
    gapset.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    found = {}
    for workers in (1, 2):
        out = tmp_path / f"rep-{workers}"
        result = runner.invoke(app, ["evaluate", "--gaps", str(gapset), "--out", str(out), "--neural-only",
                                     "--k", "5", "--workers", str(workers)])  # fmt: skip
        assert result.exit_code == 0, result.output
        found[workers] = [p.candidates for p in read_predictions(out / "predictions.jsonl")]
    assert found[2] == found[1] and len(found[1]) == 2
