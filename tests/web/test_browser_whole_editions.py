"""A whole edition on the page, in a real browser (issue 51, item 4): a standard DDB file of 34 gaps,
more than one request restores, is restored gap by gap, each gap's readings shown as it arrives and
the progress announced politely ("gap 5 of 34"); Stop cancels the rest and keeps what arrived.

    pytest -m browser tests/web/test_browser_whole_editions.py

Runs as tests/web/test_browser.py does (Debian chromium), with a stand-in restorer that pauses at
each gap, so that the run can be watched and stopped.
"""

from __future__ import annotations

import pytest

from tests.stubs import FixedReadings
from tests.web import test_browser as browser_tests
from tests.web.test_whole_editions import OXY

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not browser_tests.CHROMIUM.exists(), reason="Debian chromium not installed"),
]
browser = browser_tests.browser  # headless Debian chromium

WATCH_STATUS = """() => { window.statuses = [];
  new MutationObserver(() => window.statuses.push(document.getElementById('status').textContent))
    .observe(document.getElementById('status'), { childList: true, characterData: true, subtree: true }); }"""
IDLE = "document.body.getAttribute('aria-busy') === 'false'"


def _open_oxy(browser, url: str, model: str = "slow"):
    """A page of the app at ``url`` with p.oxy.2.298.xml opened (it restores at once), and the
    bodies of the page's /api/restore requests."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    asked: list[dict] = []
    page.on("request", lambda r: asked.append(r.post_data_json) if r.url.endswith("/api/restore") else None)
    page.goto(url + "/")
    page.wait_for_selector(f"#server-status:has-text('Model: {model}')")
    page.evaluate(WATCH_STATUS)
    page.set_input_files("#epidoc-file", str(OXY))
    return page, asked


@pytest.mark.slow  # about 10 s: run by CI's slow tier (scripts/check.sh), not the README's fast tier
def test_a_34_gap_edition_restores_gap_by_gap(browser):
    """Cards arrive while the run goes on, the status counts the gaps, axe is clean while it runs
    and after, and in the end all 34 gaps hold their readings, one request each."""
    slow = FixedReadings([("κυριωι", -1.0), ("θεου", -1.5)], name="slow", seconds=0.1)
    from tests.web.test_accessibility import assert_accessible

    with browser_tests.serving(slow) as url:
        page, asked = _open_oxy(browser, url)
        page.wait_for_function("document.querySelectorAll('.gap-card').length >= 3")
        assert page.get_attribute("body", "aria-busy") == "true"  # still running: the cards came as they were done
        assert page.is_visible("#stop")
        assert page.get_attribute("#status", "aria-live") == "polite"
        assert_accessible(page, "while a long edition is restored")
        page.wait_for_function(IDLE, timeout=60_000)
        assert page.locator(".gap-card").count() == 34
        assert page.locator(".gap-card .candidate").count() == 34 * 2
        assert page.is_hidden("#stop")
        assert page.inner_text("#status").startswith("34 gaps restored in ")
        statuses = page.evaluate("window.statuses")
        assert "Restoring gap 5 of 34…" in statuses and "Restoring gap 34 of 34…" in statuses
        assert [body["only"] for body in asked] == [[n] for n in range(1, 35)]
        assert asked[4]["fills"] == {str(n): "κυριωι" for n in range(1, 5)}  # the gaps before, as read
        assert_accessible(page, "a long edition restored")
        page.close()


def test_stop_keeps_the_gaps_that_arrived(browser):
    """Stop, pressed from the keyboard, ends the run: no gap arrives after it, the status says how
    many of the 34 were restored, focus goes back to Restore, and what arrived exports."""
    slow = FixedReadings([("κυριωι", -1.0), ("θεου", -1.5)], name="slow", seconds=0.3)
    with browser_tests.serving(slow) as url:
        page, asked = _open_oxy(browser, url)
        page.wait_for_function("document.querySelectorAll('.gap-card').length >= 2")
        page.focus("#stop")
        page.keyboard.press("Enter")
        page.wait_for_function(IDLE)
        done = page.locator(".gap-card").count()
        assert 2 <= done < 34
        assert page.inner_text("#status") == f"Stopped: {done} of 34 gaps restored; the others are left as written."
        assert page.is_hidden("#stop") and page.is_hidden("#error")
        assert page.evaluate("document.activeElement.id") == "restore"
        requests = len(asked)
        page.wait_for_timeout(1000)
        assert page.locator(".gap-card").count() == done and len(asked) == requests  # nothing more came
        page.check("#fill-all")  # the gaps that arrived, filled with their first reading; the others open
        page.click("#export-leiden")
        page.wait_for_selector("#export-result:not([hidden])")
        assert page.inner_text("#status") == f"Exported Leiden: {done} machine readings marked."
        assert "Machine-proposed readings" in page.input_value("#export-output")
        page.close()


@pytest.mark.slow  # about 14 s: run by CI's slow tier; tests/web/test_revision.py holds the same over HTTP
def test_a_pick_restores_again_only_the_gaps_whose_context_holds_it(browser):
    """Issue 64, item 5: a pick at gap 12 of 34 asks gap 12 and the later gaps whose context holds
    it (their ``reads``), not the 22 after it; the other cards stay as they were; the card offers
    "Re-restore all gaps after gap 12", which asks every later gap; axe is clean after the revision."""
    from apollo_restore.restoration.driver import restore_text
    from tests.web.test_accessibility import assert_accessible
    from tests.web.test_whole_editions import STUB

    with browser_tests.serving(STUB) as url:
        page, asked = _open_oxy(browser, url, "stub")
        page.wait_for_function(IDLE + " && document.querySelectorAll('.gap-card').length === 34", timeout=60_000)
        leiden = page.input_value("#leiden")
        reading = {g.number: g.reads for g in restore_text(STUB, leiden, k=10).gaps}
        expected = [12] + [n for n in range(13, 35) if 12 in reading[n]]
        assert 2 <= len(expected) < 10
        card_30 = page.locator("#gap-30").inner_html()  # a gap far from 12: its card is kept as it was
        del asked[:]
        page.locator("#gap-12 .candidate").nth(1).click()
        page.wait_for_function(IDLE)
        assert [body["only"] for body in asked] == [[n] for n in expected]
        assert asked[0]["pins"] == {"12": "θεου"}
        others = ", ".join(map(str, expected[1:-1])) + f" and {expected[-1]}"
        status = page.inner_text("#status")
        assert status.startswith(f"Gap 12: your reading θεου. Gaps {others} restored again in "), status
        assert status.endswith(f"The other {34 - len(expected)} gaps keep their readings."), status
        assert page.locator("#gap-30").inner_html() == card_30
        assert page.evaluate("document.activeElement.closest('.gap-card').id") == "gap-12"
        assert "θεου" in page.text_content("#gap-13 details.context p")  # the context the model saw holds the pick
        assert_accessible(page, "after a revision of one gap")

        rest = page.locator("#gap-12 .rest")
        assert rest.inner_text() == "Re-restore all gaps after gap 12"
        del asked[:]
        rest.click()
        page.wait_for_function(IDLE)
        assert [body["only"] for body in asked] == [[n] for n in range(13, 35)]
        assert page.inner_text("#status").startswith("22 gaps restored in ")
        assert page.locator("#gap-12 .rest").count() == 0 and page.locator(".gap-card").count() == 34
        page.close()
