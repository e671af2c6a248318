"""Open report pages in headless Chromium and report any JavaScript dialog or script link.

Run as a script (``python xss_check.py CHROMIUM PAGE...``) by the e2e test, like
browser_check.py. Prints one JSON object per page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from analysis.render import CHROMIUM_FLAGS

FLAGS = [f for f in CHROMIUM_FLAGS if f != "--headless"]


def main(chromium: str, pages: list[Path]) -> list[dict]:
    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        for page_file in pages:
            page = browser.new_page()
            dialogs: list[str] = []

            def on_dialog(d, dialogs=dialogs) -> None:
                dialogs.append(d.message)
                d.dismiss()

            page.on("dialog", on_dialog)
            page.goto(page_file.as_uri(), wait_until="load")
            page.wait_for_timeout(1500)  # let onerror handlers and timers fire, if any
            out.append(
                {
                    "page": page_file.name,
                    "dialogs": dialogs,
                    "javascript_links": page.locator('a[href^="javascript:" i]').count(),
                    "text": page.inner_text("body"),
                }
            )
            page.close()
        browser.close()
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], [Path(a) for a in sys.argv[2:]])))
