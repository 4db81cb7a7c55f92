"""Screenshot of the web page restoring a papyrus with the embedded model (docs/web-screenshot.png):
readings in edition form with calibrated percentages, a picked reading, the EpiDoc export.

    python scripts/screenshot.py [--index DIR] [--out docs/web-screenshot.png]

Needs Debian chromium (apt-get install -y chromium) and the pip playwright package.
"""

from __future__ import annotations

import argparse
import socket
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

from apollo_restore.restoration.load import load_restorer
from apollo_restore.web.app import create_app

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
TEXT = """1 [.7] [Δ]ι̣οφάντου Ἀλεξάνδρῳ
2 [.9] χαίριν . ὁμολογῶ
3 [προκεχρῆσ]ται μου τὰς τρεῖς
4 [κοτύλας] τοῦ ἐλαίου καὶ̣ τὸ̣ [φακοῦ]
5 [μάτιον] [ὑ]π̣ὲρ̣ μηνὸς Μεχ[ειρ] [τοῦ]
6 [πρώτου] [κ]αὶ εἰκοστοῦ ἔτο[υς]
7 [Ἁδριανο]ῦ Καίσαρος τοῦ κυρίου ."""  # O.Claud. 3.420 (test split), two supplements made gaps (see README)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=None, help="text index folder (default: as `serve`)")
    parser.add_argument("--out", type=Path, default=Path("docs/web-screenshot.png"))
    args = parser.parse_args()
    from apollo_restore.cli.serve import load_parallels

    # as `apollo-restore serve`: the index first (default: over the packaged text, built in the user
    # cache on first use), so that the default model's members share it
    parallels = load_parallels(args.index)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(load_restorer(), parallels), host="127.0.0.1", port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(600_000)  # the embedded model on a busy CPU: minutes, not playwright's 30 s
        page.goto(f"http://127.0.0.1:{port}/")
        page.fill("#leiden", TEXT)
        page.click("#restore")
        page.wait_for_selector("#gap-2 .candidate")  # gaps are numbered from 1, as the page shows them
        page.locator("#gap-1 .candidate").nth(0).click()
        page.wait_for_selector("#gap-1 .badge.pinned")
        page.wait_for_selector("#gap-2 .candidate")
        page.wait_for_function(  # each gap's parallel passages listed (or said to be none)
            "[1, 2].every((n) => { const box = document.getElementById(`parallels-${n}`);"
            " return box && box.querySelector('li, .none') && !box.textContent.includes('Searching'); })"
        )
        page.check("#fill-all")  # the EpiDoc export: <app> with the next readings as <rdg>s
        page.click("#export-epidoc")
        page.wait_for_function("document.getElementById('export-output').value.includes('<app')")
        page.evaluate("""() => { const t = document.getElementById('export-output');
            const lines = t.value.slice(0, t.value.indexOf('<app')).split('\\n').length;
            t.scrollTop = (lines - 2) * t.scrollHeight / t.value.split('\\n').length; }""")
        page.screenshot(path=str(args.out), full_page=True)
        browser.close()
    server.should_exit = True
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
