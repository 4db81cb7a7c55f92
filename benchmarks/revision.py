"""Revising one gap of a long edition on the page: the time of a pick before (every later gap restored
again) and now (only the gaps whose context holds a change: app.js ``revise``), side by side in one
run, through the HTTP API as the page asks it (one gap per request), with the packaged model.

    python benchmarks/revision.py --prepared data/prepared [--gaps 44] [--picks 6,22]

The text: the longest VALIDATION ddb document of 5,000–9,500 characters and at most 10 lacunae of its
own, with words of 4–10 letters hidden at even steps until it has ``--gaps`` gaps (its own lacunae
are gaps too: ``[.n]``, ``[- - -]`` for one of unknown or over 50 letters). It is restored gap by gap;
then at each pick gap the second reading is picked and the edition revised both ways from the same
state. Printed: seconds each way, their ratio, the gaps asked, and how many later gaps' first
readings (and lists) the revision leaves different from a whole re-run (their context held the
pick only beyond the model's window: the document members read 1,000 characters).
"""

from __future__ import annotations

import argparse
import json
import re
import time

import pyarrow.compute as pc
import pyarrow.parquet as pq
from fastapi.testclient import TestClient

from apollo_restore.restoration.load import load_restorer
from apollo_restore.web.app import create_app

_WORD = re.compile(r"[α-ω]{4,10}")


def pick_text(prepared: str, gaps: int) -> tuple[str, str]:
    """``(document id, Leiden text)`` of the benchmark (see the module's docstring)."""
    table = pq.read_table(f"{prepared}/documents.parquet", columns=["id", "source", "split", "text", "lacunae"])
    table = table.filter(pc.and_(pc.equal(table["split"], "validation"), pc.equal(table["source"], "ddb")))
    rows = [r for r in table.to_pylist() if 5000 <= len(r["text"]) <= 9500 and r["lacunae"] <= 10]
    doc = max(rows, key=lambda r: (len(r["text"]), r["id"]))
    text = doc["text"]
    own = len(re.findall(r"-+|…", text))
    words = [m for m in _WORD.finditer(text)]
    step = len(words) / max(1, gaps - own)
    hidden = {words[int(i * step)].start(): words[int(i * step)].end() for i in range(gaps - own)}
    out, at = [], 0
    for m in re.finditer(r"-+|…|[α-ω]{4,10}", text):
        if m.group()[0] in "-…":
            n = len(m.group()) if m.group()[0] == "-" else 0
            out += [text[at : m.start()], f"[.{n}]" if 0 < n <= 50 else "[- - -]"]
        elif m.start() in hidden:
            out += [text[at : m.start()], f"[.{len(m.group())}]"]
        else:
            continue
        at = m.end()
    out.append(text[at:])
    return doc["id"], "".join(out)


def holds(gap: dict) -> str:
    if gap["pinned"] is not None:
        return gap["pinned"]
    return gap["candidates"][0]["text"] if gap["candidates"] else ""


def ask(client: TestClient, text: str, number: int, gaps: list[dict], pins: dict) -> dict:
    fills = {g["number"]: holds(g) for g in gaps if g["number"] < number and g["pinned"] is None}
    body = {"text": text, "k": 10, "only": [number], "fills": fills, "pins": pins}
    answer = client.post("/api/restore", json=body)
    answer.raise_for_status()
    return answer.json()["gaps"][0]


def restore_from(client: TestClient, text: str, gaps: list[dict], pins: dict, first: int, total: int) -> list[dict]:
    """app.js ``restore(first)``: the gaps before ``first`` kept, every later one asked again."""
    out = list(gaps[: first - 1])
    for number in range(first, total + 1):
        out.append(ask(client, text, number, out, pins))
    return out


def revise(client: TestClient, text: str, gaps: list[dict], pins: dict, number: int) -> tuple[list[dict], list[int]]:
    """app.js ``revise(number)``."""
    gaps, changed, asked = list(gaps), {number}, []
    for at in range(number - 1, len(gaps)):
        old = gaps[at]
        if old["number"] != number and not changed & set(old["reads"]):
            continue
        fresh = ask(client, text, old["number"], gaps, pins)
        asked.append(old["number"])
        if old["number"] != number and holds(fresh) != holds(old):
            changed.add(old["number"])
        gaps[at] = fresh
    return gaps, asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prepared", required=True)
    parser.add_argument("--gaps", type=int, default=44)
    parser.add_argument("--picks", default="6,22")
    args = parser.parse_args()
    doc, text = pick_text(args.prepared, args.gaps)
    client = TestClient(create_app(load_restorer()))
    started = time.perf_counter()
    gaps = restore_from(client, text, [], {}, 1, args.gaps)
    whole = time.perf_counter() - started
    print(json.dumps({"doc": doc, "chars": len(text), "gaps": len(gaps), "whole_s": round(whole, 1)}), flush=True)
    totals = {"before_s": 0.0, "now_s": 0.0}
    for number in map(int, args.picks.split(",")):
        pins = {str(number): gaps[number - 1]["candidates"][1]["text"]}
        started = time.perf_counter()
        now, asked = revise(client, text, gaps, pins, number)
        now_s = time.perf_counter() - started
        started = time.perf_counter()
        before = restore_from(client, text, gaps, pins, number, len(gaps))
        before_s = time.perf_counter() - started
        totals["before_s"] += before_s
        totals["now_s"] += now_s
        later = range(number, len(gaps))
        print(json.dumps({
            "pick": number, "before_s": round(before_s, 1), "now_s": round(now_s, 1),
            "ratio": round(before_s / now_s, 1), "asked": asked, "later_gaps": len(gaps) - number,
            "first_reading_differs": [g + 1 for g in later if holds(now[g]) != holds(before[g])],
            "list_differs": [g + 1 for g in later if [c["text"] for c in now[g]["candidates"]]
                             != [c["text"] for c in before[g]["candidates"]]],
        }), flush=True)  # fmt: skip
    ratio = totals["before_s"] / totals["now_s"]
    print(json.dumps({k: round(v, 1) for k, v in totals.items()} | {"ratio": round(ratio, 1)}), flush=True)


if __name__ == "__main__":
    main()
