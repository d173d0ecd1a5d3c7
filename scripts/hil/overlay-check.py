#!/usr/bin/env python3
"""Reads [overlay] and [privacy] back from one decoded picture (raw yuv420p, as shown).

The references are `kioskcam config overlay` pictures of the same configuration: mid
grey (128) with only the overlay (one per candidate time) or only the masks drawn, so
the pixels that differ from grey are exactly the overlay's box or the masks. Prints one
line per check, "PASS<TAB>name" or "FAIL<TAB>name<TAB>detail", for the HIL scenario.

  overlay-check.py LABEL PICTURE.yuv WIDTHxHEIGHT START MASK_REF.yuv T1:REF1.yuv T2:REF2.yuv ...

START is the picture's capture second, or FIRST..LAST when only the span is known (a
live stream's playlist may begin seconds into the recording).
"""
import sys

label, picture_path, size = sys.argv[1], sys.argv[2], sys.argv[3]
first, _, last = sys.argv[4].partition("..")
start, start_last = float(first), float(last or first)
mask_ref_path, overlay_refs = sys.argv[5], [arg.split(":", 1) for arg in sys.argv[6:]]
width, height = (int(v) for v in size.split("x"))
luma_size, chroma_width = width * height, width // 2


def read(path):
    data = open(path, "rb").read()
    if len(data) < luma_size * 3 // 2:
        raise SystemExit(f"FAIL\t{label}: {path}\t{len(data)} bytes, a {size} picture needs {luma_size * 3 // 2}")
    return data


def report(ok, name, detail=""):
    print(("PASS\t" if ok else "FAIL\t") + f"{label}: {name}" + ("" if ok else f"\t{detail}"))


picture, mask_ref = read(picture_path), read(mask_ref_path)
masked = [i for i in range(luma_size) if mask_ref[i] != 128]
if masked:
    mean_y = sum(picture[i] for i in masked) / len(masked)
    chroma = [luma_size + (i // width // 2) * chroma_width + (i % width) // 2 for i in masked]
    tint = max(abs(sum(picture[c] for c in chroma) / len(chroma) - 128),
               abs(sum(picture[c + luma_size // 4] for c in chroma) / len(chroma) - 128))
    report(mean_y <= 20 and tint <= 6, f"the privacy mask is black ({len(masked)} pixels, mean Y {mean_y:.1f}, tint {tint:.1f})",
           f"mean Y {mean_y:.1f} (<= 20), chroma off neutral by {tint:.1f} (<= 6)")
    outside = [i for i in range(0, luma_size, 7) if mask_ref[i] == 128]
    report(sum(picture[i] > 40 for i in outside) > len(outside) // 4, "the scene outside the mask is not black",
           "most of the picture outside the mask is black too")

refs, scores = {}, []
for when, path in overlay_refs:
    ref = read(path)
    box = [i for i in range(luma_size) if ref[i] != 128]
    if not box:
        report(False, "the reference has an overlay", f"{path} is plain grey")
        raise SystemExit(0)
    refs[float(when)] = ref
    scores.append((sum(abs(picture[i] - ref[i]) for i in box) / len(box), float(when)))
scores.sort()
best, when = scores[0]
report(best <= 14, f"the overlay matches the reference rendering pixel by pixel (mean |dY| {best:.1f})",
       f"mean |dY| {best:.1f} > 14 against every candidate time: {scores}")
report(start - 1 <= when <= start_last + 1, f"the time shown is within 1 s of the picture's capture ({when - start:+.0f} s from the start)",
       f"the best match is {when - start:+.0f} s from the start, outside {start - start_last:+.0f}…+{start_last - start + 1:.0f} s: {scores}")
# Where the best time's rendering and another's differ (the digits that changed), the
# picture must be far closer to the best: it reads as that time and no other.
margins = []
for _, other in scores[1:]:
    differ = [i for i in range(luma_size) if abs(refs[when][i] - refs[other][i]) > 60]
    if not differ:
        continue
    near = sum(abs(picture[i] - refs[when][i]) for i in differ) / len(differ)
    far = sum(abs(picture[i] - refs[other][i]) for i in differ) / len(differ)
    margins.append((far - near, other))
weakest = min(margins) if margins else (0, when)
report(weakest[0] >= 40, f"it reads as that time and no other (the nearest other, {weakest[1] - start:+.0f} s, is {weakest[0]:.0f} further where they differ)",
       f"{margins}")
