"""The browser page's picture (docs/browser.png): jfk.wav spoken into the page's microphone, answered
by `pipeline serve`'s default models (the embedded LLM included), and the page photographed once
the reply has been heard. Prints the machine and its load with the turn's stage times.

    .venv/bin/python scripts/page_screenshot.py [--out docs/browser.png]

Needs Debian's chromium and the dev extra's playwright (as the browser tests do).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from pipeline.base.audio import INPUT_RATE_HZ, write_wav
from pipeline.base.config import Config
from pipeline.call.session import Stages
from pipeline.testing import ServerThread, jfk, silence


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="docs/browser.png")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("chromium is not installed: apt-get install chromium (make test installs it)")
    load_before = os.getloadavg()
    server = ServerThread(Stages.load(Config.default())).start()
    try:
        with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
            microphone = Path(tmp) / "jfk.wav"
            write_wav(microphone, np.concatenate([silence(1000), jfk(), silence(60_000)]), INPUT_RATE_HZ)
            browser = pw.chromium.launch(executable_path=chromium, args=[
                "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                f"--use-file-for-fake-audio-capture={microphone}%noloop"])
            page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
            page.goto(server.page_url)
            page.click("#start")
            page.locator("li.caller:not(.partial) .text").first.wait_for(timeout=90_000)
            page.locator("li.agent").first.wait_for(timeout=90_000)
            page.wait_for_function("() => Number(document.querySelector('#played-ms').dataset.ms) > 0",
                                   timeout=90_000)
            page.wait_for_function("() => !document.querySelector('li.agent.speaking')", timeout=120_000)
            figure = page.locator("figure.turn-timing").last
            figure.locator('[data-stage="first_audio_heard"]').wait_for(timeout=30_000)
            rows = figure.locator(".stage")
            stages = {rows.nth(i).get_attribute("data-stage"): rows.nth(i).get_attribute("data-ms")
                      for i in range(rows.count())}
            page.screenshot(path=args.out)
            browser.close()
    finally:
        server.stop()
    print(f"wrote {args.out}; load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after;"
          f" stage ms after the end of speech: {stages}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
