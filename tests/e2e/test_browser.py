"""End to end: JupyterLab on 127.0.0.1, a course notebook (chapter 02) opened in headless Chromium (Playwright
driving Debian's `chromium` through `executable_path`), run with "Run All Cells", its TV explorer's thread
slider moved with the keyboard, and the picture checked to have changed. Screenshots go to $CUTEKIT_TEST_ARTIFACTS/e2e (default
test-artifacts/e2e at the repository root). Skips in one line without playwright or chromium
(scripts/install_browser.sh installs both)."""
import io
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from PIL import Image

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent
COURSE = ROOT / "course"
NOTEBOOK = "02_tv_layouts.ipynb"


def chromium_path():
    for candidate in (os.environ.get("CHROMIUM_PATH"), shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path):
    """A JupyterLab server on 127.0.0.1 serving a copy of the course notebook; yields its notebook URL."""
    shutil.copy(COURSE / NOTEBOOK, tmp_path / NOTEBOOK)
    port, token = free_port(), "cutekit-e2e-" + os.urandom(8).hex()
    environment = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
                       JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
                       JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),      # the theme switch stays here
                       PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}", "--allow-root"],
        env=environment, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "jupyterlab.log", "wb"))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start: " + (tmp_path / "jupyterlab.log").read_text()[-2000:])
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


FIRST_PROMPT = "document.querySelector('.jp-CodeCell .jp-InputPrompt').textContent"


def _menu(page, menu: str, item: str):
    page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click(force=True, timeout=10_000)
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click(force=True, timeout=10_000)


def run_all_cells(page):
    """Run > Run All Cells until the first code cell shows it started ([*] or [1]): a command issued while
    the kernel's connection is still being made is dropped, so it is repeated. Then wait until that cell
    has finished; a kernel that never answers (its websocket failed on a loaded machine) is restarted with
    Kernel > Restart Kernel and Run All Cells."""
    started = f"() => /\\[(\\*|\\d+)\\]/.test({FIRST_PROMPT})"
    finished = f"() => /\\[\\d+\\]/.test({FIRST_PROMPT})"
    for _ in range(8):
        _menu(page, "Run", "Run All Cells")
        try:
            page.wait_for_function(started, timeout=8_000)
            break
        except Exception:
            page.keyboard.press("Escape")
    else:
        raise AssertionError("Run All Cells never started the notebook")
    try:
        page.wait_for_function(finished, timeout=90_000)
        return
    except Exception:
        _menu(page, "Kernel", "Restart Kernel and Run All Cells")
        page.locator(".jp-Dialog-button.jp-mod-accept").first.click(timeout=10_000)
        page.wait_for_function(finished, timeout=90_000)


@pytest.mark.slow
def test_moving_the_thread_slider_in_jupyterlab_changes_the_picture(jupyterlab):
    playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed "
                                         "(scripts/install_browser.sh)")
    executable = chromium_path()
    if executable is None:
        pytest.skip("chromium not found (scripts/install_browser.sh installs it)")
    artifacts = pathlib.Path(os.environ.get("CUTEKIT_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "e2e"
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / "failure.png").unlink(missing_ok=True)
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(jupyterlab, timeout=60_000)
            # wait until the kernel is idle, then run the code cell
            page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
            page.locator("text=Kernel status: Idle").first.wait_for(state="attached", timeout=60_000)
            page.wait_for_timeout(3_000)       # JupyterLab may still swap the session's first kernel for another
            run_all_cells(page)
            # the chapter's first explorer: the output that holds a slider, and its picture
            explorer = ".jp-OutputArea-output:has(.widget-slider)"
            try:
                picture = page.wait_for_selector(f"{explorer} img", timeout=90_000)
            except Exception:
                # seen in fresh clones: the session's first kernel was shut down and replaced as the cells
                # started, and the explorer never drew; a restarted kernel draws it
                _menu(page, "Kernel", "Restart Kernel and Run All Cells")
                page.locator(".jp-Dialog-button.jp-mod-accept").first.click(timeout=10_000)
                picture = page.wait_for_selector(f"{explorer} img", timeout=120_000)
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=picture, timeout=30_000)
            page.screenshot(path=str(artifacts / "before.png"), full_page=True)
            before_source, before_pixels = picture.get_attribute("src"), picture.screenshot()
            picture.scroll_into_view_if_needed()
            handle = page.wait_for_selector(f"{explorer} .widget-slider .noUi-handle", timeout=30_000)
            handle.focus()
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            page.wait_for_function("([img, old]) => img.src !== old && img.complete", arg=[picture, before_source],
                                   timeout=30_000)
            # the kernel redraws once per slider step: wait for the last one (its caption names thread 3)
            page.wait_for_selector(f"{explorer} >> text=thread 3 holds", timeout=30_000)
            page.wait_for_timeout(500)
            readout = page.locator(f"{explorer} .widget-readout").first.inner_text()
            page.screenshot(path=str(artifacts / "after.png"), full_page=True)
            after_pixels = picture.screenshot()
            # the same picture under JupyterLab's dark theme: the page turns dark, the figure stays light
            page.locator(".lm-MenuBar-itemLabel", has_text="Settings").first.click(force=True)
            page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
            page.locator(".lm-Menu-itemLabel", has_text="JupyterLab Dark").first.click(force=True)
            page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
            page.wait_for_timeout(500)
            page.screenshot(path=str(artifacts / "dark.png"), full_page=True)
            dark_page = page.evaluate("() => getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor")
            dark_pixels = picture.screenshot()
        except Exception:
            page.screenshot(path=str(artifacts / "failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    assert readout.strip() == "3"
    assert after_pixels != before_pixels
    # dark theme: the notebook's background is dark, the picture's own corner still near white
    red, green, blue = (int(v) for v in dark_page[dark_page.index("(") + 1:dark_page.index(")")].split(",")[:3])
    assert red + green + blue < 3 * 96, dark_page
    corner = Image.open(io.BytesIO(dark_pixels)).convert("RGB").getpixel((2, 2))
    assert min(corner) > 235, corner
