#!/usr/bin/env python3
"""scripts/bench-web-latency's measurement (see that script).

A daemon records 1280x720p30 from its test pattern with `camera.test_clock = true`: each
frame carries its capture time (wall clock, ms modulo 2^24) as 24 blocks at the top left
(TestPatternRenderer.clockStrip). Headless Chromium logs in, opens /live and, for every
frame the page's <video> presents (requestVideoFrameCallback), draws it to a canvas,
reads the blocks back and subtracts the stamp from the frame's expected display time on
the same wall clock. Prints each run's median, 10th and 90th percentiles and the sample
count, then the median of all samples against the 400 ms target.
"""
import os, shutil, socket, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "scripts"))
import cdp  # noqa: E402
from benchcommon import free_port  # noqa: E402

binary, runs, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
WIDTH, HEIGHT, FPS = 1280, 720, 30
PASSWORD = "latency bench 2026"
TARGET_MS = 400


def strip(width, height):
    """TestPatternRenderer.clockStrip, the same arithmetic."""
    count = 2 + 24
    block = min(max(4, height // 45), (width - 8) // count) & ~1
    return {"x": block, "y": block, "block": block, "count": count}


# Runs in the page: one sample per presented frame for `seconds`; resolves to the list of
# (display time − capture time) in ms.
SAMPLER = """
new Promise((resolve, reject) => {
  const v = document.querySelector('video');
  if (!v || !v.requestVideoFrameCallback) return reject(new Error('no <video> with requestVideoFrameCallback'));
  const s = %(strip)s, until = performance.now() + %(ms)d;
  const c = document.createElement('canvas');
  c.width = v.videoWidth; c.height = v.videoHeight;
  const ctx = c.getContext('2d', {willReadFrequently: true});
  const out = [], ahead = [], seen = {frames: 0, unread: 0};
  function frame(now, meta) {
    seen.frames++;
    ctx.drawImage(v, 0, 0);
    const row = ctx.getImageData(s.x, s.y + (s.block >> 1), s.count * s.block, 1).data;
    const lum = (i) => { const p = (i * s.block + (s.block >> 1)) * 4; return (row[p] + row[p + 1] + row[p + 2]) / 3; };
    const white = lum(0), black = lum(1);
    if (white - black > 64) {
      let value = 0;
      for (let i = 2; i < s.count; i++) value = value * 2 + (lum(i) * 2 > white + black ? 1 : 0);
      const shown = Math.floor(performance.timeOrigin + meta.expectedDisplayTime) %% 16777216;
      let delta = shown - value;
      if (delta < -8388608) delta += 16777216;
      if (delta > 8388608) delta -= 16777216;
      out.push(delta);
      const b = v.buffered;
      if (b.length) ahead.push(Math.round((b.end(b.length - 1) - v.currentTime) * 1000));
    } else { seen.unread++; }
    if (performance.now() < until) v.requestVideoFrameCallback(frame);
    else resolve({samples: out, ahead: ahead, frames: seen.frames, unread: seen.unread, width: v.videoWidth, height: v.videoHeight});
  }
  v.requestVideoFrameCallback(frame);
})
"""


def one_run(index):
    folder = tempfile.mkdtemp(prefix="kioskcam-bench-latency-")
    port = free_port()
    config = os.path.join(folder, "kioskcam.toml")
    with open(config, "w") as f:
        f.write(f"""[storage]
media_root = "{folder}/media"
[camera]
source = "test"
size = "{WIDTH}x{HEIGHT}"
fps = {FPS}
test_clock = true
[microphone]
source = "tone"
[control]
state_directory = "{folder}/state"
socket = "{folder}/control.sock"
[screen]
framebuffer = "memory"
[web]
listen = "127.0.0.1:{port}"
""")
    os.makedirs(f"{folder}/state", exist_ok=True)
    subprocess.run([binary, "web-user", "set", "alice", "--role", "admin", "--config", config],
                   input=PASSWORD + "\n", text=True, check=True, capture_output=True)
    log = open(os.path.join(folder, "daemon.log"), "w")
    daemon = subprocess.Popen([binary, "run", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 30
        while "web app listening" not in open(os.path.join(folder, "daemon.log")).read():
            if time.time() > deadline or daemon.poll() is not None:
                sys.exit("bench-web-latency: the daemon did not start its web app:\n" + open(os.path.join(folder, "daemon.log")).read())
            time.sleep(0.1)
        base = f"https://127.0.0.1:{port}"
        with cdp.Browser(width=WIDTH, height=HEIGHT + 200, kill_after=seconds + 120) as browser:
            page = browser.new_page()
            page.navigate(base + "/login")
            answer = page.api("POST", "/api/login", {"user": "alice", "password": PASSWORD})
            if answer.status != 200:
                sys.exit(f"bench-web-latency: login answered {answer.status}: {answer.text}")
            started = time.time()
            page.navigate(base + "/live")
            page.wait_for("(() => { const v = document.querySelector('video'); return v && v.currentTime > 0 && v.videoWidth > 0; })()",
                          timeout=20, message="the live video playing")
            first = time.time() - started
            time.sleep(2)  # past the start, as a viewer who has been watching a moment
            result = page.evaluate(SAMPLER % {"strip": strip(WIDTH, HEIGHT), "ms": int(seconds * 1000)},
                                   timeout=seconds + 30)
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
    samples = sorted(result["samples"])
    if len(samples) < 10:
        sys.exit(f"bench-web-latency: run {index}: only {len(samples)} frames read ({result})")
    deciles = statistics.quantiles(samples, n=10)
    print(f"run {index}: {result['width']}x{result['height']}, {len(samples)} frames read of {result['frames']} presented "
          f"({result['unread']} unreadable); first picture {first:.2f} s after opening /live; "
          f"latency median {statistics.median(samples):.0f} ms, p10 {deciles[0]:.0f} ms, p90 {deciles[-1]:.0f} ms, "
          f"min {samples[0]} ms, max {samples[-1]} ms; the page's buffer ahead of the picture shown: median "
          f"{statistics.median(result['ahead']) if result['ahead'] else float('nan'):.0f} ms", flush=True)
    return samples


def main():
    print(f"bench-web-latency: {binary}; {runs} runs of {seconds:.0f} s; {WIDTH}x{HEIGHT}p{FPS} test pattern with its clock; "
          f"headless {cdp.find_chromium()}", flush=True)
    every = []
    for index in range(1, runs + 1):
        every += one_run(index)
    median = statistics.median(every)
    verdict = "met" if median <= TARGET_MS else "NOT met"
    print(f"glass-to-glass (capture → presented in Chromium), all {len(every)} frames: median {median:.0f} ms "
          f"(target ≤ {TARGET_MS} ms: {verdict})")


main()
