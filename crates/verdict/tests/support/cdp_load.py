#!/usr/bin/env python3
"""Load one page in headless Chromium over the DevTools protocol (on a pipe,
--remote-debugging-pipe: fd 3 in, fd 4 out, no port) and print, as JSON,
what happened: every network request, console messages, log entries (CSP
violations land there), uncaught exceptions, and the answers to DOM
questions. Optionally save a full-page screenshot.

Usage: cdp_load.py CHROMIUM URL PROFILE_DIR [SCREENSHOT.png]

Used by crates/verdict/tests/html_report.rs. Must not: touch anything but
PROFILE_DIR and the screenshot path, or leave Chromium running.
"""
import base64
import json
import os
import select
import subprocess
import sys
import time

chromium, url, profile = sys.argv[1], sys.argv[2], sys.argv[3]
screenshot = sys.argv[4] if len(sys.argv) > 4 else None
DEADLINE = time.monotonic() + 90

commands_read, commands_write = os.pipe()
replies_read, replies_write = os.pipe()
# Keep the child's ends above 4 so dup2 onto 3 and 4 cannot clobber them.
child_in = os.dup(commands_read) if commands_read > 4 else os.dup(os.dup(os.dup(commands_read)))
child_out = os.dup(replies_write) if replies_write > 4 else os.dup(os.dup(os.dup(replies_write)))
assert child_in > 4 and child_out > 4


def child_setup():
    os.dup2(child_in, 3)
    os.dup2(child_out, 4)


browser = subprocess.Popen(
    [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--user-data-dir=" + profile,
        "--remote-debugging-pipe",
        "about:blank",
    ],
    preexec_fn=child_setup,
    pass_fds=(3, 4),
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
for descriptor in (commands_read, replies_write, child_in, child_out):
    os.close(descriptor)

buffer = b""
events = []
next_id = 0


def send(method, params=None, session=None):
    global next_id
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    os.write(commands_write, json.dumps(message).encode() + b"\0")
    return next_id


def read_message():
    global buffer
    while b"\0" not in buffer:
        remaining = DEADLINE - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("chromium did not answer in time")
        ready, _, _ = select.select([replies_read], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(replies_read, 1 << 20)
        if not chunk:
            raise EOFError("chromium closed the pipe")
        buffer += chunk
    message, buffer = buffer.split(b"\0", 1)
    return json.loads(message)


def call(method, params=None, session=None):
    wanted = send(method, params, session)
    while True:
        message = read_message()
        if message.get("id") == wanted:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message.get("result", {})
        events.append(message)


def wait_for(method):
    for index, message in enumerate(events):
        if message.get("method") == method:
            del events[index]
            return message
    while True:
        message = read_message()
        if message.get("method") == method:
            return message
        events.append(message)


try:
    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Network", "Runtime", "Log", "Page"):
        call(domain + ".enable", session=session)
    call(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1280, "height": 2000, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    events.clear()
    call("Page.navigate", {"url": url}, session=session)
    wait_for("Page.loadEventFired")
    # Let late work (images, fonts, timers) show itself.
    settle = time.monotonic() + 1.0
    while time.monotonic() < settle:
        ready, _, _ = select.select([replies_read], [], [], 0.1)
        if ready:
            chunk = os.read(replies_read, 1 << 20)
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                events.append(json.loads(message))
    questions = """JSON.stringify({
      scripts: document.querySelectorAll('script').length,
      comparison_tables: document.querySelectorAll('table.comparisons').length,
      comparison_rows: document.querySelectorAll('table.comparisons tbody tr').length,
      svgs: document.querySelectorAll('svg').length,
      forest: document.querySelectorAll('svg.forest').length,
      distributions: document.querySelectorAll('svg.distribution').length,
      run_order: document.querySelectorAll('svg.run-order').length,
      text: document.body.innerText,
      width: document.documentElement.scrollWidth,
      csp: (document.querySelector('meta[http-equiv=Content-Security-Policy]') || {}).content || null
    })"""
    dom = json.loads(
        call("Runtime.evaluate", {"expression": questions, "returnByValue": True}, session=session)[
            "result"
        ]["value"]
    )
    if screenshot:
        image = call(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True},
            session=session,
        )["data"]
        with open(screenshot, "wb") as file:
            file.write(base64.b64decode(image))
    try:
        call("Browser.close")
    except (EOFError, RuntimeError):
        pass
finally:
    try:
        browser.wait(timeout=10)
    except subprocess.TimeoutExpired:
        browser.kill()
        browser.wait()

requests = [
    event["params"]["request"]["url"]
    for event in events
    if event.get("method") == "Network.requestWillBeSent"
]
console = [
    {"type": event["params"]["type"], "text": " ".join(str(arg.get("value", arg.get("description", ""))) for arg in event["params"]["args"])}
    for event in events
    if event.get("method") == "Runtime.consoleAPICalled"
]
log = [
    {"level": event["params"]["entry"]["level"], "source": event["params"]["entry"]["source"], "text": event["params"]["entry"]["text"]}
    for event in events
    if event.get("method") == "Log.entryAdded"
]
exceptions = [
    event["params"]["exceptionDetails"].get("text", "")
    for event in events
    if event.get("method") == "Runtime.exceptionThrown"
]
json.dump(
    {"requests": requests, "console": console, "log": log, "exceptions": exceptions, "dom": dom},
    sys.stdout,
)
