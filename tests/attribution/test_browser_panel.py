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


#: tick labels as drawn: text, box and the font size they are shown at (CSS px), with the chart's box
TICKS = """() => { const svg = document.querySelector('#attribute-result svg.date-chart');
  const box = svg.getBoundingClientRect(), scale = box.width / svg.viewBox.baseVal.width;
  return { svg: [box.left, box.right, box.top, box.bottom], bars: svg.querySelectorAll('rect.bar').length,
    interval: svg.querySelector('rect.interval').getBoundingClientRect().width,
    ticks: [...svg.querySelectorAll('text.tick')].map((t) => { const r = t.getBoundingClientRect();
      return { text: t.textContent, box: [r.left, r.right, r.top, r.bottom],
               px: parseFloat(getComputedStyle(t).fontSize) * scale }; }) }; }"""


def _whole_and_legible(drawn: dict) -> None:
    """Every tick label inside the chart (none clipped: "800 BC", not "0 BC") and at least 10 px."""
    left, right, top, bottom = drawn["svg"]
    assert drawn["ticks"], drawn
    for tick in drawn["ticks"]:
        t_left, t_right, t_top, t_bottom = tick["box"]
        inside = left - 0.5 <= t_left and t_right <= right + 0.5 and top <= t_top and t_bottom <= bottom + 0.5
        assert inside, (tick, drawn)
        assert tick["px"] >= 10, tick


@pytest.mark.parametrize("width", [1280, 320])
def test_the_date_plot_zooms_reads_and_downloads(packaged_is_tiny, browser, width, tmp_path):  # noqa: F811
    """A date read from a formula (AD 127–129): the plot shows the interval and its margins, not a
    hairline on 1,700 years; the whole range is one click away and back; every tick label is whole
    and at least 10 px at 1280 and 320 px; the plot downloads as a standalone SVG file; no serious
    axe violation with the plot shown."""
    import xml.etree.ElementTree as ET

    with browser_tests.serving(NoRestorer()) as server:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(server + "/")
        page.fill("#leiden", TEXT + "\n4 ἔτους ιβ Ἁδριανοῦ Καίσαρος τοῦ κυρίου Φαῶφι ε")
        with page.expect_response(lambda r: r.url.endswith("/api/attribute")):
            page.click("#attribute")
        page.wait_for_selector("#attribute-result svg.date-chart text.tick")
        zoomed = page.evaluate(TICKS)
        _whole_and_legible(zoomed)
        years = [int(t["text"].removeprefix("AD ")) for t in zoomed["ticks"]]
        assert all(100 <= y <= 160 for y in years), years  # the interval, 127–129, and its margins
        assert zoomed["interval"] >= 0.04 * (zoomed["svg"][1] - zoomed["svg"][0])  # not a hairline
        assert zoomed["bars"] <= 3
        assert "the 80 % interval and its margins" in page.inner_text("#attribute-result figcaption")
        a11y.assert_accessible(page, f"the date plot zoomed at {width} px")

        page.click("#attribute-result .date-zoom")
        whole = page.evaluate(TICKS)
        _whole_and_legible(whole)
        assert whole["ticks"][0]["text"] == "800 BC" and whole["bars"] == 68
        assert "the whole range" in page.inner_text("#attribute-result figcaption")
        assert page.inner_text("#attribute-result .date-zoom") == "Zoom to the 80 % interval"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.click("#attribute-result .date-zoom")

        def placed(ticks: list[dict]) -> list[tuple]:
            return [(t["text"], round(t["box"][0])) for t in ticks]

        assert placed(page.evaluate(TICKS)["ticks"]) == placed(zoomed["ticks"])

        with page.expect_download() as download:
            page.click("#attribute-result .date-download")
        assert download.value.suggested_filename == "date-distribution.svg"
        path = tmp_path / "plot.svg"
        download.value.save_as(path)
        svg = ET.parse(path).getroot()  # a standalone XML document
        ns = "{http://www.w3.org/2000/svg}"
        assert svg.tag == f"{ns}svg" and svg.get("width") == "640"
        assert svg.find(f"{ns}title").text == page.inner_text("#attribute-summary")
        ticks = [int(t.text.removeprefix("AD ")) for t in svg.iter(f"{ns}text")]
        assert len(ticks) >= 2 and all(100 <= y <= 160 for y in ticks), ticks  # the view shown, 640 px wide
        assert all(t.get("font-size") and t.get("fill") for t in svg.iter(f"{ns}text"))  # styled in itself
        assert len(list(svg.iter(f"{ns}rect"))) >= 3  # the background, the interval and a bar
        page.close()
