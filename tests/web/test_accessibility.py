"""Accessibility of the page in a real browser: axe-core (axe-playwright-python, which bundles it)
on the page as loaded, after a restore and after a pick, keyboard focus kept through every run,
and no sideways scrolling on a 320 px wide screen (WCAG 1.4.10 reflow).

    pytest -m browser tests/web/test_accessibility.py

Runs as tests/web/test_browser.py does (Debian chromium, the tiny random model, its fixtures).
"""

from __future__ import annotations

import pytest

from tests.stubs import FixedReadings
from tests.web import test_browser as browser_tests

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not browser_tests.CHROMIUM.exists(), reason="Debian chromium not installed"),
]
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright", reason="pip install axe-playwright-python")

server = browser_tests.server  # the tiny model's app on loopback
browser = browser_tests.browser  # headless Debian chromium

#: Violations of these impacts fail a test; moderate and minor ones are printed only.
FAILING = ("serious", "critical")


def axe_violations(page, state: str) -> list[dict]:
    """axe-core's violations on ``page`` as it is now, its experimental rules included (among
    them label-content-name-mismatch: a control's name must hold the words it shows)."""
    axe = axe_sync.Axe()
    page.evaluate(axe.axe_script)
    experimental = page.evaluate("axe.getRules(['experimental']).map((rule) => rule.ruleId)")
    assert "label-content-name-mismatch" in experimental
    options = {"resultTypes": ["violations"], "rules": {rule: {"enabled": True} for rule in experimental}}
    violations = axe.run(page, options=options).response["violations"]
    for v in violations:
        targets = "; ".join(" ".join(node["target"]) for node in v["nodes"])
        print(f"axe {state}: {v['id']} ({v['impact']}) on {targets}")
    return [v for v in violations if v["impact"] in FAILING]


def assert_accessible(page, state: str) -> None:
    failing = axe_violations(page, state)
    assert not failing, f"axe, {state}:\n" + "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} at {[node['target'] for node in v['nodes']]}" for v in failing
    )


def focused(page) -> dict:
    """What has keyboard focus: its tag, id, the gap card it is in, and the reading if a candidate."""
    return page.evaluate(
        """() => { const a = document.activeElement;
          const card = a && a.closest ? a.closest('.gap-card') : null;
          return { tag: a ? a.tagName.toLowerCase() : null, id: a ? a.id : null, card: card ? card.id : null,
                   pressed: a && a.getAttribute ? a.getAttribute('aria-pressed') : null,
                   reading: a && a.querySelector && a.querySelector('.reading')
                     ? a.querySelector('.reading').textContent : null }; }"""
    )


def press_and_wait(page, selector: str, key: str = "Enter") -> None:
    """Focus ``selector``, press ``key`` and wait for the restoration it starts, and for the page
    to be idle again (the status is written and focus placed after the answer is rendered)."""
    page.focus(selector)
    with page.expect_response(lambda r: r.url.endswith("/api/restore")):
        page.keyboard.press(key)
    page.wait_for_function("document.body.getAttribute('aria-busy') === 'false'")


def test_page_passes_axe_and_keeps_keyboard_focus(server, browser):
    """No serious or critical axe violation as loaded, after a restore and after a pick; focus
    after Restore, a pick, Release and Re-run is where the user was, never <body>."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server + "/")
    page.wait_for_selector("#server-status:has-text('Model: tiny')")
    assert_accessible(page, "as loaded")

    page.fill("#leiden", browser_tests.PAPYRUS)
    page.select_option("#k", "5")
    press_and_wait(page, "#restore")
    page.wait_for_selector("#gap-2 .candidate")
    assert focused(page)["id"] in ("restore", "text-heading")  # kept, or the restored text's heading
    assert_accessible(page, "after a restore")

    # pick the second reading of gap 1 with the keyboard: focus stays on that reading, now pressed
    reading = page.locator("#gap-1 .candidate").nth(1).locator(".reading").inner_text()
    press_and_wait(page, "#gap-1 li:nth-child(2) > .candidate")
    page.wait_for_selector("#gap-1 .badge.pinned")
    now = focused(page)
    assert (now["tag"], now["card"], now["pressed"], now["reading"]) == ("button", "gap-1", "true", reading), now
    assert_accessible(page, "after picking a reading")

    # release it: focus stays in gap 1
    press_and_wait(page, "#gap-1 .unpin")
    page.wait_for_selector("#gap-1 .badge.open, #gap-1 .badge.proposed")
    now = focused(page)
    assert now["tag"] != "body" and now["card"] == "gap-1", now

    # re-run gap 2 with another length: focus stays in gap 2
    page.select_option("#hint-mode-2", "exact")
    page.fill("#hint-lo-2", "3")
    press_and_wait(page, "#gap-2 fieldset.hint button")
    page.wait_for_selector("#gap-2 h3:has-text('3 letters')")
    now = focused(page)
    assert now["tag"] != "body" and now["card"] == "gap-2", now
    assert_accessible(page, "after a re-run")

    # Ctrl+Enter in the text restores and leaves the cursor in the text
    page.fill("#leiden", browser_tests.PAPYRUS.replace("[.4]", "[.5]"))
    press_and_wait(page, "#leiden", "Control+Enter")
    page.wait_for_selector("#gap-1 h3:has-text('5 letters')")
    assert focused(page)["id"] == "leiden"
    page.close()


def test_page_reflows_at_320_px(server, browser):
    """At 320 CSS px wide (a phone, or 1280 px zoomed to 400 %) nothing scrolls sideways,
    restored or with a reading picked."""
    page = browser.new_page(viewport={"width": 320, "height": 640})
    page.goto(server + "/")
    page.wait_for_selector("#server-status:has-text('Model: tiny')")
    page.fill("#leiden", browser_tests.PAPYRUS)
    press_and_wait(page, "#restore")
    page.wait_for_selector("#gap-2 .candidate")
    width = "document.documentElement.scrollWidth"
    assert page.evaluate(width) <= 320, page.evaluate(
        "[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 320)"
        ".map((e) => e.tagName + '#' + e.id + '.' + e.className).slice(0, 10)"
    )
    press_and_wait(page, "#gap-1 .candidate")
    page.wait_for_selector("#gap-1 .badge.pinned")
    assert page.evaluate(width) <= 320
    assert_accessible(page, "at 320 px, a reading picked")
    page.close()


def test_readings_as_an_edition_writes_them_pass_axe(presented_stub, browser):
    """What the tiny model never shows: readings in edition form with their letters in grey,
    notes on doubtful readings, a calibrated reading written into the text and badged
    "proposed", beside a gap left open."""
    from apollo_restore.restoration.presentation.present import Presented
    from apollo_restore.restoration.ranking.calibration import Calibration
    from apollo_restore.restoration.ranking.order import Ranking
    from apollo_restore.schema.folder import Scaling

    sure = Calibration({c: Scaling() for c in ("exact", "range", "none")})  # no weight on "none of these"
    confident = Presented(
        FixedReadings([("κυριωι", -0.01), ("θεου", -3.0)], name="confident", k=2),
        presented_stub.forms,
        Ranking(calibration=sure),
    )
    with browser_tests.serving(confident) as url:
        page = browser_tests._restore_on_page(browser, url, "Model: confident", "τῷ [.6] χαίρειν [- - -] τῷ")
        page.wait_for_selector("#gap-2 .candidate")
        assert page.locator("#gap-1 .badge.proposed").count() == 1
        assert "machine" in page.get_attribute("#mark-1", "class")  # ⁅κυρίῳ⁆ written into the text
        assert page.locator("#gap-2 .badge.open").count() == 1
        assert page.locator(".candidate .flag").count() >= 1
        assert_accessible(page, "readings in edition form, one proposed")
        page.close()
