"""A figure stated in several documents comes from one place (issue 46, item 5): how often a
first reading shown at ≥ 90 % was right, and how many gaps had one, are those of the shipped
model's ``calibration.json`` (``info.above_90_after_cross_fitted``) wherever they are written."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION = ROOT / "src" / "apollo_restore" / "models" / "default" / "calibration.json"
PLACES = [
    ROOT / "README.md",
    ROOT / "MODEL_CARD.md",
    ROOT / "docs" / "usage.md",
    ROOT / "docs" / "web.md",
    ROOT / "src" / "apollo_restore" / "web" / "static" / "index.html",
    ROOT / "src" / "apollo_restore" / "schema" / "restoration.py",
]
# "right 98 %", "98 % of those were right", "were right 98 % of the time", within a sentence after "90 %"
_RIGHT = re.compile(r"90 %[^.]{0,200}?(?:right (\d+(?:\.\d+)?) %|(\d+(?:\.\d+)?) % of those were right)")


def _flat(path: Path) -> str:
    return re.sub(r"\s+#?:?\s*", " ", path.read_text(encoding="utf-8"))


def test_the_right_share_above_90_is_the_calibrations_everywhere():
    info = json.loads(CALIBRATION.read_text(encoding="utf-8"))["info"]["above_90_after_cross_fitted"]
    right = round(100 * info["right"])
    found = {}
    for path in PLACES:
        for match in _RIGHT.finditer(_flat(path)):
            found.setdefault(path.name, []).append(float(match.group(1) or match.group(2)))
    assert len(found) >= 5, found  # README, MODEL_CARD, usage, the page, the code's comment
    wrong = {name: values for name, values in found.items() if any(v != right for v in values)}
    assert not wrong, f"calibration.json says {right} %: {wrong}"


def test_the_share_of_gaps_above_90_is_the_calibrations_everywhere():
    info = json.loads(CALIBRATION.read_text(encoding="utf-8"))["info"]["above_90_after_cross_fitted"]
    share = round(100 * info["share"])
    text = " ".join(_flat(path) for path in PLACES)
    stated = [float(m) for m in re.findall(r"(\d+(?:\.\d+)?) % (?:had one|of the gaps|of gaps)", text)]
    assert stated and all(v == share for v in stated), (share, stated)


#: The shipped default's test report, which README and MODEL_CARD both cite for their DDB rows.
SHIPPED_REPORT = ROOT / "reports" / "ddb-test-v6" / "metrics.json"
#: README's DDB row label and MODEL_CARD's of each hint condition of the report.
CONDITIONS = {
    "exact": ("exact", "exact hint"),
    "range": ("a range holding it", "range holding the truth"),
    "wrong100": ("wrong by 1–5 letters", "every hint wrong by 1–5 letters"),
    "none": ("none", "no hint"),
}


def _report() -> dict:
    return json.loads(SHIPPED_REPORT.read_text(encoding="utf-8"))


def test_the_ddb_test_figures_are_the_shipped_reports_in_readme_and_model_card():
    groups = _report()["groups"]["synthetic"]["included"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    card = (ROOT / "MODEL_CARD.md").read_text(encoding="utf-8")
    for condition, (in_readme, in_card) in CONDITIONS.items():
        w = groups[condition]["ddb"]["uniform"]
        top1, top20 = round(100 * w["top1"]), round(100 * w["top20"])
        assert f"| documentary papyri (DDB) | {in_readme} | {top1} % | {top20} % |" in readme, condition
        row = re.search(rf"\| {re.escape(in_card)} \| \**([0-9.]+)\** \| \**([0-9.]+)\** \|", card)
        assert row and (float(row[1]), float(row[2])) == (round(w["top1"], 3), round(w["top20"], 3)), condition


def test_the_test_calibration_error_is_the_shipped_reports_in_readme_and_model_card():
    ece = _report()["calibration"]["all"]["top1"]["ece"]
    stated = f"{ece:.3f}"
    assert f"(ECE {stated})" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"ECE top-1\n**{stated}**" in (ROOT / "MODEL_CARD.md").read_text(encoding="utf-8")
