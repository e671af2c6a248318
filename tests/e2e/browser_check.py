"""Open a rendered report in headless Chromium and report what a reader's browser saw.

Run as a script (``python browser_check.py INDEX.html EXPECTED_CHARTS CHROMIUM``) by the
e2e test: Playwright's greenlets are kept out of the pytest process. Prints one JSON object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from analysis.render import CHROMIUM_FLAGS

#: The renderer's Chromium flags (toolchain notes); Playwright adds its own headless flag.
FLAGS = [f for f in CHROMIUM_FLAGS if f != "--headless"]
LOCAL = ("file:", "data:", "blob:", "about:")


def main(index: Path, expected: int, chromium: str) -> dict:
    external: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page()
        page.on("request", lambda r: None if r.url.startswith(LOCAL) else external.append(r.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(index.as_uri(), wait_until="load")
        drawn = True
        try:
            page.wait_for_function(
                f"document.querySelectorAll('svg.marks').length >= {expected}", timeout=20000
            )
        except Exception:  # noqa: BLE001 - reported below as a count mismatch
            drawn = False
        folds = page.locator("details.code-fold")
        code_hidden_before = code_visible_after = None
        if folds.count():
            first = folds.first
            code_hidden_before = not first.locator("pre").first.is_visible()
            first.locator("summary").click()
            code_visible_after = first.locator("pre").first.is_visible()
        result = {
            "drawn": drawn,
            "svg_marks": page.locator("svg.marks").count(),
            "charts": page.locator("div.gpu-chart").count(),
            "folds": folds.count(),
            "code_hidden_before": code_hidden_before,
            "code_visible_after": code_visible_after,
            "external_requests": external,
            "console_errors": errors,
        }
        browser.close()
    return result


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
