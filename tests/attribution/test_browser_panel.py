"""The page's *When and where?* panel in a real browser (Debian chromium, as tests/web/test_browser.py):
the date distribution drawn as an inline SVG with a text alternative, the places, the dating
formula read, no serious axe violation, nothing scrolling sideways at 320 px.

    pytest -m browser tests/attribution/test_browser_panel.py
"""

from __future__ import annotations

import pytest

from tests.attribution.test_web import NoRestorer, packaged_is_tiny  # noqa: F401 (a fixture)
from tests.web import test_accessibility as a11y
from tests.web import test_browser as browser_tests

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not browser_tests.CHROMIUM.exists(), reason="Debian chromium not installed"),
]
browser = browser_tests.browser  # headless Debian chromium
TEXT = "1 Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι [.4]\n2 χαίρειν. ὁμολογῶ πεπρακέναι σοι\n3 κάμηλον θήλειαν"


@pytest.mark.parametrize("width", [1280, 320])
def test_panel_draws_the_date_and_places(packaged_is_tiny, browser, width):  # noqa: F811
    with browser_tests.serving(NoRestorer()) as server:
        page = browser.new_page(viewport={"width": width, "height": 900})
        external: list[str] = []
        page.on("request", lambda r: None if r.url.startswith(server) else external.append(r.url))
        page.goto(server + "/")
        page.fill("#leiden", TEXT)
        with page.expect_response(lambda r: r.url.endswith("/api/attribute")):
            page.click("#attribute")
        page.wait_for_selector("#attribute-result svg.date-chart rect.bar")
        summary = page.inner_text("#attribute-summary")
        assert "80 % of the probability lies between" in summary
        label = page.get_attribute("#attribute-result svg", "aria-labelledby")
        assert label == "attribute-summary" and page.get_attribute("#attribute-result svg", "role") == "img"
        assert page.locator("#attribute-result svg rect.bar").count() == 68
        assert page.locator("#attribute-result ol.places li").count() == 3
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not external  # drawn by the page itself
        assert page.locator("#attribute-result p.formula").count() == 0  # no dating formula in it
        a11y.assert_accessible(page, f"the attribution panel at {width} px")
        page.fill("#leiden", TEXT + "\n4 ἔτους ιβ Ἁδριανοῦ Καίσαρος τοῦ κυρίου Φαῶφι ε")
        with page.expect_response(lambda r: r.url.endswith("/api/attribute")):
            page.click("#attribute")
        page.wait_for_selector("#attribute-result p.formula")
        assert "year 12" in page.inner_text("#attribute-result p.formula") and "AD 127" in page.inner_text(
            "#attribute-result p.formula"
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        a11y.assert_accessible(page, f"the attribution panel with a dating formula at {width} px")
        page.fill("#leiden", TEXT + "\n4 Κλεάνδρου")  # a dated name: no regnal year to show
        with page.expect_response(lambda r: r.url.endswith("/api/attribute")):
            page.click("#attribute")
        page.wait_for_function("document.querySelector('#attribute-result p.formula')?.innerText.includes('names')")
        named = page.inner_text("#attribute-result p.formula")
        assert "Dated names read" in named and "AD 190" in named and "null" not in named
        page.close()
