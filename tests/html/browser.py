#!/usr/bin/python3
"""browser.py - open fakegc's HTML pages in headless Chromium (Selenium and
chromedriver) and check what a person would: the page loads fast, logs no
console error, fetches nothing but itself, and its controls work.

usage: browser.py OUTDIR KIND=PAGE [KIND=PAGE ...]
  KIND: clean (a passing run), leak (a failing run with a dominator tree
  and a timeline), leak5m (the same of a leak of 5M objects or more, whose
  caps must be stated as "kept X of Y"), diff (a diff's page), record (a recorded leaking
  program's page) or stress (a stress reproducer's page). Writes OUTDIR/KIND.png and
  prints one line per page: "KIND: BYTES bytes, loaded in MS ms" (MS: from
  the navigation's start to loadEventEnd, the file read included; the line
  also gives responseStart..loadEventEnd and domContentLoaded), and one
  line per screenshot: its path and size.
Exit 0 all good, 1 a check failed, 77 no Chromium/chromedriver/Selenium.
"""
import json
import os
import shutil
import sys
import tempfile
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
except ImportError:
    webdriver = None

LOAD_BUDGET_MS = 2000
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def start(profile):
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1280,900",
              "--user-data-dir=" + profile):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=o)


def load(d, path):
    url = "file://" + os.path.abspath(path)
    d.get("about:blank")
    d.get_log("performance")   # drain what the first tab did
    d.get(url)
    t = d.execute_script(
        "var t=performance.getEntriesByType('navigation')[0];"
        "return [t.startTime, t.responseStart, t.domContentLoadedEventEnd,"
        " t.loadEventEnd>0?t.loadEventEnd:performance.now()];")
    start, resp, dcl, end = t
    return url, end - start, end - resp, dcl - start


def no_errors_no_fetches(d, kind, url):
    errs = [e for e in d.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    check(not errs, "%s: console errors: %s" % (kind, errs))
    res = d.execute_script("return performance.getEntriesByType('resource').map(e=>e.name)")
    check(res == [], "%s: resources fetched: %s" % (kind, res))
    # every request the DevTools protocol saw: the page's own document and
    # anything it asked for (documentURL is the page), and no request at all
    # to the network from anywhere (the browser's own chrome:// pages aside)
    sent, net = [], []
    for e in d.get_log("performance"):
        m = json.loads(e["message"])["message"]
        if m.get("method") != "Network.requestWillBeSent":
            continue
        u = m["params"]["request"]["url"]
        if m["params"].get("documentURL") == url:
            sent.append(u)
        if u.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp"):
            net.append(u)
    check(sent == [url], "%s: the page asked for more than itself: %s" % (kind, sent))
    check(not net, "%s: network requests: %s" % (kind, net))


def section_order(d, kind, ids):
    ys = [d.execute_script("var e=document.getElementById(arguments[0]);"
                           "return e?e.getBoundingClientRect().top+scrollY:-1", i) for i in ids]
    check(all(y >= 0 for y in ys), "%s: missing sections in %s: %s" % (kind, ids, ys))
    check(ys == sorted(ys), "%s: sections out of order %s: %s" % (kind, ids, ys))


def verdict(d):
    return d.find_element(By.ID, "verdict").text


def check_clean(d):
    check("PASS" in verdict(d), "clean: verdict is %r" % verdict(d))
    check("Every scenario passed" in d.page_source, "clean: no 'Every scenario passed'")


def visible(d, el):
    return d.execute_script("var e=arguments[0];return e.checkVisibility?e.checkVisibility():"
                            "e.getClientRects().length>0", el)


def check_tree(d, kind="leak"):
    closed = d.find_elements(By.CSS_SELECTOR, "#tree details:not([open]) > summary")
    check(closed, "%s: no collapsed dominator-tree node to expand" % kind)
    if not closed:
        return
    s = closed[0]
    det = s.find_element(By.XPATH, "..")
    kids = det.find_elements(By.CSS_SELECTOR, ":scope > ul > li")
    check(kids, "%s: the collapsed node has no children in the page" % kind)
    check(kids and not visible(d, kids[0]), "%s: a child is visible before the click" % kind)
    d.execute_script("arguments[0].scrollIntoView({block:'center'})", s)
    s.click()
    check(kids and visible(d, kids[0]), "%s: the child did not appear after the click" % kind)
    text = kids[0].text if kids else ""
    check(" x " in text and "retained" in text,
          "%s: the expanded child says %r, not 'N x kind ... retained'" % (kind, text))
    print("%s: expanded %r -> first child %r" % (kind, s.text[:80], text[:100]))


def check_timeline(d, kind="leak"):
    panel = d.find_element(By.CSS_SELECTOR, ".tl")
    objs = [int(x) for x in panel.get_attribute("data-o").split(",")]
    peak = max(range(len(objs)), key=lambda i: (objs[i], -i))
    d.execute_script("arguments[0].scrollIntoView({block:'center'})", panel)
    panel.find_element(By.CSS_SELECTOR, "button.peak").click()
    a, b = panel.get_attribute("data-sel-a"), panel.get_attribute("data-sel-b")
    check(a == str(peak) and b == str(peak),
          "%s: jump to peak selected %s..%s, the peak is point %d" % (kind, a, b, peak))
    out = panel.find_element(By.CSS_SELECTOR, ".readout").text
    check(("%d objects" % objs[peak]) in out, "%s: readout %r lacks the peak %d" % (kind, out, objs[peak]))
    sel = panel.find_element(By.CSS_SELECTOR, "rect.sel")
    check(sel.is_displayed(), "%s: the selection is not drawn" % kind)
    print("%s: jump to peak ->" % kind, out)
    svg = panel.find_element(By.TAG_NAME, "svg")
    w = svg.size["width"]
    ActionChains(d).move_to_element_with_offset(svg, int(-w * 0.3), 0).click_and_hold() \
        .move_by_offset(int(w * 0.4), 0).release().perform()
    a, b = int(panel.get_attribute("data-sel-a")), int(panel.get_attribute("data-sel-b"))
    out = panel.find_element(By.CSS_SELECTOR, ".readout").text
    check(a < b and out.startswith("statements "), "%s: range selection %d..%d %r" % (kind, a, b, out))
    print("%s: range ->" % kind, out)
    panel.find_element(By.CSS_SELECTOR, "button.peak").click()   # leave the peak shown


def check_leak(d, kind="leak"):
    check("FAIL" in verdict(d), "%s: verdict is %r" % (kind, verdict(d)))
    rows = d.find_elements(By.CSS_SELECTOR, "#groups tr.grp")
    check(rows, "%s: no group rows" % kind)
    check(d.find_elements(By.CSS_SELECTOR, "#groups .path"), "%s: no representative path" % kind)
    check("kept" in d.find_element(By.ID, "groups").text, "%s: groups do not say kept X of Y" % kind)
    check_tree(d, kind)
    check_timeline(d, kind)


def check_caps(d, kind):
    """Every hard cap the page applies is stated as "kept X of Y": the
    groups, the examples per group, the dominator tree's nodes and the
    timeline's points."""
    import re
    text = d.find_element(By.TAG_NAME, "body").text
    for what, pat in (("groups", r"kept \d+ of \d+ groups"),
                      ("examples", r"examples: kept \d+ of \d+"),
                      ("tree nodes", r"kept \d+ of \d+ tree nodes"),
                      ("timeline points", r"points: kept \d+ of \d+")):
        m = re.search(pat, text)
        check(m, "%s: the page does not state its cap on %s (%s)" % (kind, what, pat))
        if m:
            print("%s: %s" % (kind, m.group(0)))


def check_leak5m(d):
    check_leak(d, "leak5m")
    check_caps(d, "leak5m")


def check_record(d):
    """A recorded leaking program (leak_accumulating.py): the verdict first
    in the summary, the failing class with its holder, groups at the
    program's lines."""
    check("FAIL" in verdict(d), "record: verdict is %r" % verdict(d))
    summary = d.find_element(By.ID, "summary")
    v = summary.find_elements(By.CSS_SELECTOR, ".verdict")
    check(v, "record: the summary has no verdict")
    if not v:
        return
    first = summary.find_elements(By.CSS_SELECTOR, "h3 ~ *")
    check(first and first[0] == v[0], "record: the verdict is not the first thing under the "
          "scenario's heading")
    lines = [li.text for li in v[0].find_elements(By.CSS_SELECTOR, "li.vc")]
    print("record: verdict lines", lines)
    acc = [t for t in lines if t.startswith("accumulating")]
    check(acc and "(fails)" in acc[0] and "held by KEEP" in acc[0]
          and "leak_accumulating.py:" in acc[0],
          "record: no 'accumulating (fails) ... held by KEEP ... leak_accumulating.py:N' in %r"
          % lines)
    check(lines and lines[0].startswith("accumulating"), "record: the failing class is not "
          "first: %r" % lines)
    rows = d.find_elements(By.CSS_SELECTOR, "#groups tr.vgrp")
    check(rows, "record: no verdict group rows")
    sites = [r.find_element(By.CSS_SELECTOR, "td.site").text for r in rows]
    import re
    check(sites and all(re.fullmatch(r"leak_accumulating\.py:\d+", x) for x in sites),
          "record: the groups do not name program lines: %r" % sites)
    check_tree(d, "record")


def check_stress(d):
    """The page of a stress reproducer's run: it fails, and the culprit
    (held by a memo) comes before what a variable holds."""
    check("FAIL" in verdict(d), "stress: verdict is %r" % verdict(d))
    cls = [li.text for li in d.find_elements(By.CSS_SELECTOR, "#summary li.cls")]
    check(cls and cls[0].startswith("held by memo"),
          "stress: the first leak class is not the memo's: %r" % cls)
    check(d.find_elements(By.CSS_SELECTOR, "#groups tr.grp"), "stress: no group rows")
    print("stress: leak classes", cls)


def check_diff(d):
    check("regressed" in verdict(d), "diff: verdict is %r" % verdict(d))
    check(d.find_elements(By.CSS_SELECTOR, "tr.newfail"), "diff: no new failure rows")
    check(d.find_element(By.ID, "verdict-line").text.startswith("diff:"),
          "diff: no text verdict line")
    check_tree(d, "diff")


def screenshot(d, path):
    """The whole page, not only the window (DevTools captureBeyondViewport)."""
    import base64
    h = d.execute_script("return document.documentElement.scrollHeight")
    shot = d.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": 1280, "height": min(max(h, 600), 12000), "scale": 1}})
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    if webdriver is None or not CHROMIUM or not os.path.exists(DRIVER):
        print("SKIP: chromium, chromedriver or python3-selenium is not installed")
        return 77
    outdir = sys.argv[1]
    checks = {"clean": check_clean, "leak": check_leak, "leak5m": check_leak5m,
              "diff": check_diff,
              "record": check_record, "stress": check_stress}
    profile = tempfile.mkdtemp(prefix="fakegc-chromium-")
    d = start(profile)
    try:
        for arg in sys.argv[2:]:
            kind, path = arg.split("=", 1)
            url, ms, from_resp, dcl = load(d, path)
            size = os.path.getsize(path)
            print("%s: %d bytes, loaded in %.0f ms (navigation start to loadEventEnd; "
                  "responseStart to loadEventEnd %.0f ms, domContentLoaded at %.0f ms)"
                  % (kind, size, ms, from_resp, dcl))
            check(ms < LOAD_BUDGET_MS, "%s: loaded in %.0f ms (budget %d)" % (kind, ms, LOAD_BUDGET_MS))
            check(size < 5 * 1024 * 1024, "%s: %d bytes (budget 5 MB)" % (kind, size))
            if kind == "diff":
                section_order(d, kind, ["summary", "scenarios", "tree", "text"])
            else:
                section_order(d, kind, ["summary", "groups", "tree", "growth", "timeline"])
            checks[kind.split("-")[0]](d)
            no_errors_no_fetches(d, kind, url)
            d.execute_script("scrollTo(0,0)")
            png = os.path.join(outdir, kind + ".png")
            screenshot(d, png)
            print("%s: screenshot %s (%d bytes)" % (kind, png, os.path.getsize(png)))
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
