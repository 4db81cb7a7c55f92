"""End to end in a real headless browser: Debian chromium driven by the pip ``playwright`` package.

    apt-get install -y chromium          # no `playwright install`: no browser download
    pytest -m browser tests/web/test_browser.py

The server runs in a thread (uvicorn, loopback, free port) with a tiny random model, so the
readings are junk; the flow is what is tested: paste, restore, pick, re-run, export.
Set ``APOLLO_RESTORE_SCREENSHOT=path.png`` to keep the screenshot (default: the test's tmp dir).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from apollo_restore.data.normalise import normalise
from tests.stubs import FixedReadings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
PAPYRUS = (
    "1 Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4]\n"
    "2 χαίρειν. ὁμολογῶ πεπρακέναι σοι\n"
    "3 κάμηλον θήλειαν [.12] πυρρὰν κεχαραγμένην"
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium not installed (apt-get install -y chromium)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serving(restorer):
    """The app of ``restorer`` on loopback in a background thread; yields its base URL."""
    return serving_app(restorer, None)


@contextlib.contextmanager
def serving_app(restorer, parallels):
    """The app of ``restorer`` (and ``parallels``) on loopback in a background thread; yields its base URL."""
    import uvicorn

    from apollo_restore.web.app import create_app

    port = free_port()
    app = create_app(restorer, parallels=parallels)
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(tiny_restorer):
    with serving(tiny_restorer) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def test_browser_paste_restore_pick_export(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    external: list[str] = []
    page.on(
        "request", lambda r: None if r.url.startswith(server) or r.url.startswith("blob:") else external.append(r.url)
    )
    page.goto(server + "/")
    page.wait_for_selector("#server-status:has-text('Model: tiny')")
    assert "no parallel-passage index loaded" in page.inner_text("#server-status")

    # paste a papyrus text and restore
    page.fill("#leiden", PAPYRUS)
    page.select_option("#k", "5")
    page.click("#restore")
    page.wait_for_selector("#gap-2 .candidate")
    assert page.locator(".gap-card").count() == 2
    assert page.locator("#gap-1 .candidate").count() >= 2
    assert page.inner_text("#mark-1 sup") == "1" and page.inner_text("#mark-2 sup") == "2"
    assert "No index loaded" in page.inner_text("#parallels-1")
    before = page.text_content("#gap-2 details.context p")

    # pick the second candidate of gap 1: the request pins it, gap 2 is restored again with it
    second = page.locator("#gap-1 .candidate").nth(1)
    reading = second.locator(".reading").inner_text()
    with page.expect_response(lambda r: r.url.endswith("/api/restore")) as answer:
        second.click()
    assert answer.value.request.post_data_json["pins"] == {"1": reading}  # gaps are numbered from 1
    page.wait_for_selector("#gap-1 .badge.pinned")
    page.wait_for_function("document.body.getAttribute('aria-busy') === 'false'")  # gap 2, whose context holds it
    assert page.locator("#gap-1 .candidate[aria-pressed='true'] .reading").inner_text() == reading
    assert "pinned" in page.get_attribute("#mark-1", "class")
    assert page.inner_text("#mark-1 .reading") == f"⁅{reading}⁆"  # a pick is never the editor's [ ]
    assert page.inner_text("#mark-1").endswith("(your pick, a machine reading)")  # in words, not colour alone
    after = page.text_content("#gap-2 details.context p")
    assert normalise(reading) in after and after != before  # the context the model saw is normalised
    assert page.locator("#gap-2 .candidate").count() >= 1

    # change the length hint of gap 2 with the keyboard only
    page.focus("#hint-mode-2")
    page.keyboard.press("ArrowDown")  # "exactly"
    page.fill("#hint-lo-2", "3")
    with page.expect_response(lambda r: r.url.endswith("/api/restore")) as answer:
        page.press("#hint-lo-2", "Enter")
    assert answer.value.request.post_data_json["hints"] == {"2": 3}
    page.wait_for_selector("#gap-2 h3:has-text('3 letters')")
    assert page.locator("#gap-1 .badge.pinned").count() == 1  # the pick on gap 1 survives

    # export Leiden: the picked reading is marked as a machine proposal
    page.click("#export-leiden")
    page.wait_for_selector("#export-result:not([hidden])")
    exported = page.input_value("#export-output")
    assert f"⁅{reading}⁆⁽ᵐ¹⁾" in exported
    assert "Machine-proposed readings (apollo-restore " in exported and ", model «tiny», fingerprint " in exported
    assert "[.12]" in exported or "[- - -]" in exported  # the unpicked gap stays a lacuna
    assert page.get_attribute("#export-download", "download") == "restoration.txt"
    shot = Path(os.environ.get("APOLLO_RESTORE_SCREENSHOT") or tmp_path / "web-screenshot.png")
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000

    # export EpiDoc
    page.click("#export-epidoc")
    page.wait_for_function("document.getElementById('export-output').value.includes('resp=\"#apollo-restore\"')")
    assert 'cert="low"' in page.input_value("#export-output")

    # a malformed text: the error says where, and the cursor goes there
    page.fill("#leiden", "Κόμων [.4 χαίρειν")
    page.click("#restore")
    page.wait_for_selector("#error:not([hidden])")
    assert "Line 1, column 7" in page.inner_text("#error")
    assert page.evaluate("document.getElementById('leiden').selectionStart") == 6
    # the previous text's results and export are gone with the error (issue #13)
    assert page.is_hidden("#text-panel") and page.is_hidden("#gaps-panel") and page.is_hidden("#export-panel")
    assert page.input_value("#export-output") == ""

    # the API docs render offline, from the packaged Swagger UI
    page.goto(server + "/docs")
    page.wait_for_selector(".swagger-ui .opblock")
    assert external == []  # no CDN, no outside request
    page.close()


def _restore_on_page(browser, url: str, status: str, leiden: str):
    """A new page of the app at ``url``, once its status line shows ``status``, with ``leiden``
    typed in and Restore clicked."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url + "/")
    page.wait_for_selector(f"#server-status:has-text('{status}')")
    page.fill("#leiden", leiden)
    page.click("#restore")
    return page


def test_browser_edition_forms_calibration_and_alternatives(presented_stub, browser):
    """Readings in edition form, calibrated percentages explained, missed hints and a truncated
    word noted and demoted, and the EpiDoc export's <app> with the next readings as <rdg>s."""
    with serving(presented_stub) as url:
        page = _restore_on_page(browser, url, "Model: stub", "τῷ [.6] χαίρειν")
        page.wait_for_selector("#gap-1 .candidate")
        readings = page.locator("#gap-1 .candidate .reading").all_inner_texts()
        assert readings == ["κυρίῳ", "θεοῦ", "κυρ"]
        assert page.locator("#gap-1 .candidate .normalised").first.inner_text() == "κυριωι"
        # κυρίῳ is shown at 50 %, below the 90 % at which a machine reading is written into the text
        assert page.inner_text("#mark-1").endswith("[.6]") and "open" in page.get_attribute("#mark-1", "class")
        assert "calibrated" in page.inner_text("#prob-help") and "held-out" in page.inner_text("#prob-help")
        # each doubtful reading says why (Candidate.notes), the answer says nothing
        assert page.locator("#gap-1 .candidate").first.locator(".flag").count() == 0
        assert page.locator("#gap-1 .candidate").nth(1).locator(".flag").inner_text() == "4 letters, hint 6"
        flags = page.locator("#gap-1 .candidate").nth(2).locator(".flag").all_inner_texts()
        assert flags == ["3 letters, hint 6", "leaves a non-word: κυρ"]
        # θεου and κυρ miss the hint (×0.01) and κυρ is truncated before " χαίρειν" (×0.1) before
        # the calibration: κυρίῳ 50 % (30 % with the truncation demotion alone, 24 % with none)
        assert page.locator("#gap-1 .candidate .prob").first.inner_text() == "50 %"
        page.check("#fill-all")
        page.click("#export-epidoc")
        page.wait_for_function("document.getElementById('export-output').value.includes('<app')")
        xml = page.input_value("#export-output")
        assert '<lem resp="#apollo-restore" cert="low">' in xml and "κυρίῳ" in xml
        assert xml.count("<rdg ") == 2 and "θεοῦ" in xml
        shot = os.environ.get("APOLLO_RESTORE_SCREENSHOT_FORMS")
        if shot:
            page.screenshot(path=shot, full_page=True)
        page.close()


def test_browser_parallels_are_those_of_the_cli(presented_stub, browser, tiny_prepared, tmp_path):
    """The page lists, for each gap, what `apollo-restore parallels --json` gives for the same
    text: readings in edition form, each document a link to its edition."""
    import json

    from typer.testing import CliRunner

    from apollo_restore.cli.app import app
    from apollo_restore.retrieve.parallels import build_index
    from apollo_restore.web.parallels import IndexParallels

    build_index(tiny_prepared, tmp_path / "index")
    text = "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4] χαίρειν. ὁμολογῶ πεπρακέναι"
    done = CliRunner().invoke(app, ["parallels", text, "--index", str(tmp_path / "index"), "--json", "--limit", "5"])
    (cli,) = json.loads(done.output)
    assert cli["groups"][0]["display"] == "Ὥρου"
    with serving_app(presented_stub, IndexParallels.open(tmp_path / "index")) as url:
        page = _restore_on_page(browser, url, "parallel passages available", text)
        page.wait_for_selector("#parallels-1 li")
        items = page.locator("#parallels-1 li")
        assert items.locator(".reading").all_inner_texts() == [g["display"] for g in cli["groups"]]
        first = items.first.locator("a")
        assert first.all_inner_texts() == cli["groups"][0]["labels"]  # the ids, with their corpus where needed
        assert [first.nth(j).get_attribute("href") for j in range(first.count())] == cli["groups"][0]["urls"]
        assert first.first.get_attribute("rel") == "noopener"
        assert f"×{cli['groups'][0]['count']}" in items.first.inner_text()
        page.close()


def test_browser_after_a_pick_the_page_tells_the_truth(presented_stub, browser):
    """Picking the only gap's reading: the calibration wording stays true (the model folder is
    calibrated), the status does not claim a restoration that did not run, and the export writes
    the probabilities as the page shows them."""
    with serving(presented_stub) as url:
        page = _restore_on_page(browser, url, "Model: stub", "τῷ [.6] χαίρειν")
        page.wait_for_selector("#gap-1 .candidate")
        assert page.inner_text("#status").startswith("1 gap restored in ")
        shown = dict(
            zip(
                page.locator("#gap-1 .candidate .reading").all_inner_texts(),
                page.locator("#gap-1 .candidate .prob").all_inner_texts(),
            )
        )
        with page.expect_response(lambda r: r.url.endswith("/api/restore")):
            page.locator("#gap-1 .candidate").first.click()
        page.wait_for_selector("#gap-1 .badge.pinned")
        help_text = page.inner_text("#prob-help")
        assert "calibrated" in help_text and "no calibration" not in help_text
        # the pick is announced (the status is a live region), and no restoration is claimed
        status = page.inner_text("#status")
        assert status == "Gap 1: your reading κυρίῳ. Nothing to restore: the gap holds your reading."
        page.click("#export-leiden")
        page.wait_for_selector("#export-result:not([hidden])")
        exported = page.input_value("#export-output")
        assert "⁅κυρίῳ⁆⁽ᵐ¹⁾" in exported and f"κυρίῳ ({shown['κυρίῳ']})" in exported
        for reading in ("θεοῦ", "κυρ"):
            assert f"{reading} ({shown[reading]})" in exported  # the alternatives too
        assert "p = " not in exported and "0.00" not in exported
        page.close()


#: a best reading that is a phrase of long words, wide in a serif
LONG_READINGS = FixedReadings(
    [("κιβαριατηι στρατιωτηι αλεξανδρωι διοφαντου χαιρειν", -1.0), ("χαιρειν", -2.0)], name="long", k=2
)


def test_browser_multi_word_readings_wrap_between_words(browser):
    """In a card about 350 px wide, a long reading takes several lines, and no word is cut."""
    with serving(LONG_READINGS) as url:
        page = browser.new_page(viewport={"width": 380, "height": 900})
        page.goto(url + "/")
        page.wait_for_selector("#server-status:has-text('Model: long')")
        page.fill("#leiden", "πλεῖστα [.45] καὶ ἀσπάζομαι")
        page.click("#restore")
        page.wait_for_selector("#gap-1 .candidate")
        width = page.evaluate("document.getElementById('gap-1').getBoundingClientRect().width")
        assert 300 <= width <= 370
        lines_per_word = page.evaluate(
            """() => {
            const node = document.querySelector('#gap-1 .candidate .reading').firstChild;
            const out = []; let at = 0;
            for (const word of node.textContent.split(' ')) {
              const range = document.createRange();
              range.setStart(node, at); range.setEnd(node, at + word.length);
              out.push(new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size);
              at += word.length + 1;
            }
            return out;
          }"""
        )
        reading_lines = page.evaluate(
            "new Set([...document.querySelector('#gap-1 .candidate .reading').getClientRects()]"
            ".map((r) => Math.round(r.top))).size"
        )
        assert reading_lines > 1 and set(lines_per_word) == {1}, lines_per_word
        page.close()


def test_browser_help_follows_the_users_text(server, browser):
    """The line describing the example text is shown only while that text is in the box."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server + "/")
    page.wait_for_selector("#server-status:has-text('Model: tiny')")
    example = page.input_value("#leiden")
    assert page.is_visible("#example-help") and "O.Claud. 3.420" in page.inner_text("#example-help")
    page.fill("#leiden", PAPYRUS)
    assert page.is_hidden("#example-help")
    page.fill("#leiden", example)
    assert page.is_visible("#example-help")
    page.close()
