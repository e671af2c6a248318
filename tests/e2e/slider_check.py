"""Open a rendered report in headless Chromium; move the what-if sliders; report what changed.

Run as a script (``python slider_check.py INDEX.html CHROMIUM``) by the e2e test, as
browser_check.py is. Prints one JSON object: the charts drawn, the slider count, the
$/M-token labels of every chart with sliders before and after moving each vendor's price
slider, horizontal overflow of the page, and console errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from analysis.render import CHROMIUM_FLAGS

FLAGS = [f for f in CHROMIUM_FLAGS if f != "--headless"]

#: The "$0.401"-style labels of the charts that carry sliders, per chart.
LABELS_JS = """() => [...document.querySelectorAll('div.gpu-chart')]
  .filter(c => c.querySelector('input[type=range]'))
  .map(c => [...c.querySelectorAll('svg text')].map(t => t.textContent)
              .filter(s => /^\\$\\d/.test(s)))"""

MOVE_JS = """(factor) => {
  let moved = 0;
  for (const input of document.querySelectorAll('div.gpu-chart input[type=range]')) {
    const label = input.closest('label') ? input.closest('label').textContent : '';
    if (!/GPU-hour/.test(label)) continue;
    input.value = String(Math.min(Number(input.max), Number(input.value) * factor));
    input.dispatchEvent(new Event('input', {bubbles: true}));
    input.dispatchEvent(new Event('change', {bubbles: true}));
    moved += 1;
  }
  return moved;
}"""


def main(index: Path, chromium: str) -> dict:
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(index.as_uri(), wait_until="load")
        charts = page.locator("div.gpu-chart").count()
        drawn = True
        try:
            page.wait_for_function(
                f"document.querySelectorAll('div.gpu-chart svg.marks').length >= {charts}",
                timeout=30000,
            )
        except Exception:  # noqa: BLE001 - reported as a count mismatch
            drawn = False
        before = page.evaluate(LABELS_JS)
        moved = page.evaluate(MOVE_JS, 1.5)
        page.wait_for_timeout(800)
        after = page.evaluate(LABELS_JS)
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        result = {
            "charts": charts,
            "drawn": drawn,
            "svg": page.locator("div.gpu-chart svg.marks").count(),
            "sliders": page.locator("div.gpu-chart input[type=range]").count(),
            "moved": moved,
            "labels_before": before,
            "labels_after": after,
            "overflow_px": overflow,
            "console_errors": errors,
        }
        browser.close()
    return result


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2])))
