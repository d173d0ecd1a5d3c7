#!/usr/bin/env python3
"""Screenshots of the web app as a phone shows it (headless Chromium over DevTools):
logs in through the real form, then writes web-live.png (the live video playing) and
web-library.png (today's grid). Used by scripts/demo.

Usage: web-screenshots.py BASE_URL USER PASSWORD OUT_DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "scripts"))
import cdp  # noqa: E402

base, user, password, out = sys.argv[1:5]
with cdp.Browser(width=390, height=844) as browser:
    page = browser.new_page(base + "/login")
    page.wait_for("document.querySelector('#user') !== null", message="the login form")
    page.type_text("#user", user)
    page.type_text("#password", password)
    page.click("#login-submit")
    page.wait_for("location.pathname === '/live'", timeout=20, message="the live page after logging in")
    page.wait_for("(() => { const v = document.querySelector('#live'); return v && v.videoWidth > 0 && v.currentTime > 1; })()",
                  timeout=30, message="the live video playing")
    time.sleep(0.5)
    page.screenshot(os.path.join(out, "web-live.png"))
    day = time.strftime("%Y%m%d")
    page.navigate(f"{base}/library?date={day}")
    page.wait_for("document.querySelectorAll('.item').length > 0", timeout=20, message="today's recordings in the library")
    page.wait_for("[...document.querySelectorAll('.item img')].every(i => i.complete)", timeout=20,
                  message="the thumbnails")
    page.screenshot(os.path.join(out, "web-library.png"))
print(f"  {out}/web-live.png and web-library.png")
