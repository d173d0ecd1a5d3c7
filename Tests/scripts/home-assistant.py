#!/usr/bin/env python3
"""A real Home Assistant Core (2024.3.3, from PyPI) against a real `kioskcam run`, through a
real Mosquitto: each a named check.

Usage: home-assistant.py KIOSKCAM_BINARY   (run with .build-tools/homeassistant/bin/python)

Home Assistant is onboarded and given its MQTT integration over its REST API, as a user
does it in the browser. Then: every entity KioskCam announces appears, with the device's
name, link and serial; the recording and stream switches and the snapshot button act;
the camera shows a still without a press (the still interval); a manual event turns "Event clip" on and
"Motion" not, fires the device trigger an automation listens to, and sets "Last event" to
a timestamp; a restart keeps "Last event" and "Events today"; a clean stop makes every
entity unavailable; a restart without `[events]` removes the event entities; Home
Assistant's generic camera, given the RTSP URL and the snapshot URL with the owner's
password, streams live video (HLS out of Home Assistant, probed with ffprobe); and Home
Assistant's log has no warning or error about any of it. Prints PASS/FAIL per check
and, last, "N passed, M failed"; exits 1 on any failure.
"""
from daemon_config import base_config
import json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.error, urllib.parse, urllib.request

BINARY = sys.argv[1]
HASS = os.path.join(os.path.dirname(sys.executable), "hass")
results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)[:800]), flush=True)
    return ok


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(seconds, condition):
    deadline = time.time() + seconds
    while True:
        try:
            value = condition()
        except (OSError, ValueError, KeyError):
            value = None
        if value or time.time() > deadline:
            return value
        time.sleep(0.25)


class HomeAssistant:
    def __init__(self, folder, port):
        self.folder, self.port, self.token = folder, port, None
        self.base = f"http://127.0.0.1:{port}"

    def request(self, method, path, body=None, form=None, raw=False):
        headers = {}
        data = None
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                payload = response.read()
                return response.status, (payload if raw else json.loads(payload or b"null"))
        except urllib.error.HTTPError as error:
            return error.code, error.read()[:500]

    def states(self):
        status, states = self.request("GET", "/api/states")
        return {s["entity_id"]: s for s in states} if status == 200 else {}

    def template(self, text):
        request = urllib.request.Request(self.base + "/api/template", data=json.dumps({"template": text}).encode(),
                                         headers={"Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read().decode()

    def log(self):
        with open(os.path.join(self.folder, "home-assistant.log"), errors="replace") as f:
            return f.read()


def hls_url(ha, entity):
    """The camera entity's HLS address, asked over Home Assistant's WebSocket API."""
    import asyncio
    import aiohttp

    async def ask():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"ws://127.0.0.1:{ha.port}/api/websocket") as ws:
                await ws.receive_json(timeout=10)
                await ws.send_json({"type": "auth", "access_token": ha.token})
                if (await ws.receive_json(timeout=10)).get("type") != "auth_ok":
                    return None
                await ws.send_json({"id": 1, "type": "camera/stream", "entity_id": entity})
                answer = await ws.receive_json(timeout=60)
                return (answer.get("result") or {}).get("url") if answer.get("success") else f"refused: {answer}"

    url = asyncio.run(ask())
    return url if url and url.startswith("/api/hls/") else None


def main():
    folder = tempfile.mkdtemp(prefix="kioskcam-ha-")
    mqtt_port, ha_port, web_port, rtsp_port = free_port(), free_port(), free_port(), free_port()
    password = "tulip orbit canyon"
    processes = []

    def start(args, log_name, **kwargs):
        log = open(os.path.join(folder, log_name), "ab")
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, **kwargs)
        processes.append(process)
        return process

    try:
        # The broker.
        with open(os.path.join(folder, "mosquitto.conf"), "w") as f:
            # log_type subscribe: the log says when a client subscribed to a topic (below).
            f.write(f"listener {mqtt_port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    "log_type error\nlog_type warning\nlog_type notice\nlog_type information\nlog_type subscribe\n")
        start(["mosquitto", "-c", os.path.join(folder, "mosquitto.conf")], "mosquitto.log")
        check("mosquitto listens", wait_for(10, lambda: socket.create_connection(("127.0.0.1", mqtt_port), 1).close() or True))

        # The camera: test pattern, tone, event clips, the web app (its address is the
        # device's link), a still every 10 s.
        config = os.path.join(folder, "kioskcam.toml")

        def write_config(events=True):
            with open(config, "w") as f:
                f.write(base_config(folder) + f"""[web]
listen = "127.0.0.1:{web_port}"
[stream]
url = "{folder}/hls"
[rtsp]
enabled = true
listen = "127.0.0.1:{rtsp_port}"
udp_port = 0
[onvif]
enabled = true
discovery = false
[mqtt]
url = "mqtt://127.0.0.1:{mqtt_port}"
state_interval_seconds = 5
still_interval_seconds = 10
device_name = "Front door"
""" + ("""[events]
mode = "both"
motion = false
pre_seconds = 1
post_seconds = 1
""" if events else ""))

        def kioskcam(*args):
            return subprocess.run([BINARY, *args, "--config", config], capture_output=True, timeout=60)

        def start_daemon():
            daemon = start([BINARY, "run", "--config", config], "daemon.log")
            wait_for(30, lambda: b"mqtt: connected" in open(os.path.join(folder, "daemon.log"), "rb").read())
            return daemon

        def stop_daemon(daemon):
            daemon.send_signal(signal.SIGTERM)
            return daemon.wait(timeout=60)

        write_config()
        made = subprocess.run([BINARY, "web-user", "set", "owner", "--role", "admin", "--onvif-digest", "--config", config],
                              input=(password + "\n").encode(), capture_output=True, timeout=60)
        check("the owner's password is set", made.returncode == 0, made.stderr)
        daemon = start_daemon()
        status = json.loads(kioskcam("status", "--json").stdout or b"{}")
        device_id = status.get("device_id", "")
        check("the daemon runs and has a device id", daemon.poll() is None and device_id, status)
        prefix = "kioskcam_" + re.sub(r"[^A-Za-z0-9_-]", "", device_id)[:8].lower() + "_"

        # Home Assistant: only what a camera on MQTT needs, nothing installed while it runs
        # (--skip-pip: every requirement is in the venv install-deps made).
        ha_folder = os.path.join(folder, "homeassistant")
        os.makedirs(ha_folder)
        with open(os.path.join(ha_folder, "configuration.yaml"), "w") as f:
            f.write(f"""homeassistant:
  name: KioskCam test
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: NL
  currency: EUR
http:
  server_host: 127.0.0.1
  server_port: {ha_port}
api:
onboarding:
config:
camera:
stream:
device_automation:
automation: !include automations.yaml
input_boolean:
  event_started:
    name: Event started
logger:
  default: info
""")
        with open(os.path.join(ha_folder, "automations.yaml"), "w") as f:
            f.write("[]\n")
        started = time.time()
        hass = start([HASS, "-c", ha_folder, "--skip-pip"], "hass.out")
        ha = HomeAssistant(ha_folder, ha_port)
        up = wait_for(180, lambda: ha.request("GET", "/api/onboarding")[0] == 200)
        check(f"Home Assistant starts ({time.time() - started:.0f} s)", up and hass.poll() is None, open(os.path.join(folder, "hass.out")).read()[-2000:])

        # Onboarding, as the first page a new user sees does it, then a token.
        client_id = ha.base + "/"
        code, body = ha.request("POST", "/api/onboarding/users", {"client_id": client_id, "name": "Owner", "username": "owner",
                                                                   "password": "correct horse battery", "language": "en"})
        check("onboarding makes the owner", code == 200 and "auth_code" in body, body)
        code, token = ha.request("POST", "/auth/token", form={"grant_type": "authorization_code", "code": body["auth_code"], "client_id": client_id})
        check("the owner gets a token", code == 200 and "access_token" in token, token)
        ha.token = token["access_token"]

        # The MQTT integration, through its config flow.
        code, flow = ha.request("POST", "/api/config/config_entries/flow", {"handler": "mqtt", "show_advanced_options": False})
        check("the MQTT config flow asks for the broker", code == 200 and flow.get("step_id") == "broker", flow)
        code, entry = ha.request("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"broker": "127.0.0.1", "port": mqtt_port})
        check("the MQTT integration is set up", code == 200 and entry.get("type") == "create_entry", entry)

        expected = {
            "switch": ["recording", "stream"], "button": ["snapshot"], "camera": ["camera"],
            "sensor": ["free_space", "last_event", "dropped_frames", "events_today"],
            "binary_sensor": ["camera_problem", "microphone_problem", "default_pin", "motion", "event_in_progress"],
        }
        wanted = [f"{domain}.{prefix}{name}" for domain, names in expected.items() for name in names]

        def ours():
            return {k: v for k, v in ha.states().items() if prefix in k}

        states = wait_for(30, lambda: (lambda s: s if all(e in s and s[e]["state"] != "unavailable" for e in wanted) else None)(ours()))
        states = states or ours()
        missing = [e for e in wanted if e not in states or states[e]["state"] == "unavailable"]
        check(f"all {len(wanted)} entities appear, available", not missing, f"missing or unavailable: {missing}; have {sorted(states)}")
        extra = sorted(set(states) - set(wanted))
        check("no entity beyond those", not extra, extra)

        # The device: its name, link (the web app) and serial.
        device = ha.template(f"{{{{ device_attr('switch.{prefix}recording', 'name') }}}}|"
                             f"{{{{ device_attr('switch.{prefix}recording', 'configuration_url') }}}}|"
                             f"{{{{ device_attr('switch.{prefix}recording', 'serial_number') }}}}")
        name, url, serial = (device.split("|") + ["", "", ""])[:3]
        check("the device is named by mqtt.device_name", name == "Front door", device)
        check("the device links to the web app", url == f"https://127.0.0.1:{web_port}/", device)
        check("the device's serial is its id", serial == device_id, device)

        def state(entity):
            return ha.states().get(entity, {}).get("state")

        free = states.get(f"sensor.{prefix}free_space", {})
        check("free space is in GB, a number", free.get("attributes", {}).get("unit_of_measurement") == "GB"
              and float(free.get("state", "x")) > 0, free)
        check("the camera and the microphone are no problem", state(f"binary_sensor.{prefix}camera_problem") == "off"
              and state(f"binary_sensor.{prefix}microphone_problem") == "off")
        check("the default PIN is a problem", state(f"binary_sensor.{prefix}default_pin") == "on")
        check("no event yet: last event unknown, none today", state(f"sensor.{prefix}last_event") == "unknown"
              and state(f"sensor.{prefix}events_today") == "0", (state(f"sensor.{prefix}last_event"), state(f"sensor.{prefix}events_today")))

        # The camera shows a still without a press: the still interval.
        def camera_image():
            code, image = ha.request("GET", f"/api/camera_proxy/camera.{prefix}camera", raw=True)
            return image if code == 200 and image[:2] == b"\xff\xd8" else None
        first = wait_for(20, camera_image)
        check("the camera entity shows a JPEG without a press", first)
        renewed = wait_for(25, lambda: (lambda image: image if image and image != first else None)(camera_image()))
        check("the still is renewed on its interval (10 s)", renewed)

        # The snapshot button takes a still into the library and shows it.
        before = camera_image()
        code, _ = ha.request("POST", "/api/services/button/press", {"entity_id": f"button.{prefix}snapshot"})
        photos = lambda: [p for _, _, files in os.walk(os.path.join(folder, "media", "photo")) for p in files if p.endswith(".jpg")]
        check("the snapshot button saves a still", code == 200 and wait_for(15, photos), code)
        check("the camera entity shows it", wait_for(15, lambda: (lambda i: i and i != before)(camera_image())))

        # The recording switch.
        code, _ = ha.request("POST", "/api/services/switch/turn_on", {"entity_id": f"switch.{prefix}recording"})
        on = wait_for(15, lambda: json.loads(kioskcam("status", "--json").stdout).get("state") == "recording")
        check("the recording switch starts a recording", code == 200 and on)
        check("the switch shows on", wait_for(15, lambda: state(f"switch.{prefix}recording") == "on"))
        time.sleep(1.5)
        ha.request("POST", "/api/services/switch/turn_off", {"entity_id": f"switch.{prefix}recording"})
        check("the recording switch stops it", wait_for(15, lambda: state(f"switch.{prefix}recording") == "off"
                                                         and json.loads(kioskcam("status", "--json").stdout).get("state") == "idle"))
        videos = [p for _, _, files in os.walk(os.path.join(folder, "media", "video")) for p in files if p.endswith(".mp4")]
        check("the recording is in the library", len(videos) == 1, videos)

        # The stream switch: off stops the [stream] output (its playlist ends), on starts it.
        playlist = os.path.join(folder, "hls", "index.m3u8")
        check("the stream switch is on (the [stream] output runs)", wait_for(15, lambda: state(f"switch.{prefix}stream") == "on"
                                                                           and os.path.exists(playlist)))
        ha.request("POST", "/api/services/switch/turn_off", {"entity_id": f"switch.{prefix}stream"})
        check("the stream switch stops the stream", wait_for(15, lambda: state(f"switch.{prefix}stream") == "off"
                                                             and "#EXT-X-ENDLIST" in open(playlist).read()))
        ha.request("POST", "/api/services/switch/turn_on", {"entity_id": f"switch.{prefix}stream"})
        check("the stream switch starts it again", wait_for(15, lambda: state(f"switch.{prefix}stream") == "on"
                                                            and "#EXT-X-ENDLIST" not in open(playlist).read()))

        # A device trigger: an automation made as the automation editor makes it.
        device_ha_id = ha.template(f"{{{{ device_id('switch.{prefix}recording') }}}}")
        automation = {"id": "kioskcam_event", "alias": "KioskCam event", "mode": "single",
                      "trigger": [{"platform": "device", "domain": "mqtt", "device_id": device_ha_id,
                                   "type": "event_started", "subtype": "event_clip"}],
                      "condition": [], "action": [{"service": "input_boolean.turn_on", "target": {"entity_id": "input_boolean.event_started"}}]}
        code, body = ha.request("POST", "/api/config/automation/config/kioskcam_event", automation)
        check("an automation on the device trigger is saved", code == 200, body)
        check("the automation is on", wait_for(15, lambda: state("automation.kioskcam_event") == "on"), state("automation.kioskcam_event"))
        # The automation's MQTT subscription is made after it turns on, and event messages
        # are not retained: the broker's log says when Home Assistant subscribed.
        broker_log = os.path.join(folder, "mosquitto.log")
        check("Home Assistant subscribed to the device's events topic", wait_for(30, lambda: any(
            line.rstrip().endswith("/events") for line in open(broker_log, errors="replace"))))

        # A manual event: "Event clip" on, "Motion" not, the switch on, the trigger fires.
        event_started = time.time()
        check("kioskcam event start", kioskcam("event", "start").returncode == 0)
        check("Event clip turns on", wait_for(15, lambda: state(f"binary_sensor.{prefix}event_in_progress") == "on"))
        check("the recording switch is on during the clip", state(f"switch.{prefix}recording") == "on")
        check("Motion stays off (a manual event is no motion)", state(f"binary_sensor.{prefix}motion") == "off")
        check("the device trigger fired the automation", wait_for(10, lambda: state("input_boolean.event_started") == "on"))
        time.sleep(1)
        kioskcam("event", "stop")
        check("Event clip turns off", wait_for(20, lambda: state(f"binary_sensor.{prefix}event_in_progress") == "off"))
        last = state(f"sensor.{prefix}last_event") or ""
        try:
            from datetime import datetime
            at = datetime.fromisoformat(last).timestamp()
        except ValueError:
            at = 0
        check("Last event is a timestamp, the event's start", abs(at - event_started) < 5, last)
        check("Events today: 1", wait_for(10, lambda: state(f"sensor.{prefix}events_today") == "1"), state(f"sensor.{prefix}events_today"))

        # A restart keeps them.
        check("the daemon stops cleanly", stop_daemon(daemon) == 0)
        check("a clean stop makes the entities unavailable", wait_for(15, lambda: state(f"switch.{prefix}recording") == "unavailable"))
        daemon = start_daemon()
        check("after a restart the entities come back", wait_for(30, lambda: state(f"switch.{prefix}recording") == "off"))
        check("after a restart Last event is kept", wait_for(15, lambda: state(f"sensor.{prefix}last_event") == last),
              (state(f"sensor.{prefix}last_event"), last))
        check("after a restart Events today is kept", wait_for(15, lambda: state(f"sensor.{prefix}events_today") == "1"),
              state(f"sensor.{prefix}events_today"))

        # Without [events]: their entities go.
        stop_daemon(daemon)
        write_config(events=False)
        daemon = start_daemon()
        gone = [f"binary_sensor.{prefix}motion", f"binary_sensor.{prefix}event_in_progress", f"sensor.{prefix}events_today"]
        check("without [events] the event entities disappear",
              wait_for(30, lambda: (lambda s: all(e not in s for e in gone) and s.get(f"switch.{prefix}recording", {}).get("state") == "off")(ha.states())),
              sorted(k for k in ha.states() if prefix in k))

        # Live video, last (Home Assistant rightly logs an error when a stream it reads
        # ends, and its stream outlives the entity). MQTT has no stream for a camera
        # entity, so Home Assistant takes the RTSP URL through its generic camera, set up
        # through its config flow; the still through the web app with HTTP Digest.
        code, flow = ha.request("POST", "/api/config/config_entries/flow", {"handler": "generic", "show_advanced_options": False})
        check("the generic camera's config flow opens", code == 200 and flow.get("step_id") == "user", flow)
        quoted = urllib.parse.quote(password)
        code, flow = ha.request("POST", f"/api/config/config_entries/flow/{flow.get('flow_id')}", {
            "stream_source": f"rtsp://owner:{quoted}@127.0.0.1:{rtsp_port}/live", "rtsp_transport": "tcp",
            "still_image_url": f"https://127.0.0.1:{web_port}/api/snapshot.jpg", "authentication": "digest",
            "username": "owner", "password": password, "framerate": 2, "verify_ssl": False})
        check("Home Assistant reads the still and the RTSP stream", code == 200 and flow.get("step_id") == "user_confirm_still", flow)
        code, entry = ha.request("POST", f"/api/config/config_entries/flow/{flow.get('flow_id')}", {"confirmed_ok": True})
        check("the generic camera is added", code == 200 and entry.get("type") == "create_entry", entry)
        cameras = wait_for(20, lambda: [e for e, v in ha.states().items() if e.startswith("camera.") and prefix not in e
                                          and v["state"] != "unavailable"])
        check("its camera entity appears", cameras, sorted(ha.states()))
        hls = hls_url(ha, cameras[0]) if cameras else None
        check("the camera entity streams (Home Assistant gives an HLS address)", hls, hls)
        if hls:
            probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0",
                                    "-rw_timeout", "30000000", ha.base + hls], capture_output=True, timeout=90)
            check("the stream plays: H.264 320x240 out of Home Assistant (ffprobe)",
                  b"h264,320,240" in probe.stdout, (probe.stdout, probe.stderr[-500:]))
        code, image = ha.request("GET", f"/api/camera_proxy/{cameras[0]}", raw=True) if cameras else (0, b"")
        check("its still is a JPEG from the snapshot URL", code == 200 and image[:2] == b"\xff\xd8", code)

        # Home Assistant's ONVIF integration, set up by hand (its own discovery gives an
        # http:// host; ONVIF here is on the web app's HTTPS), signing with PasswordDigest.
        code, flow = ha.request("POST", "/api/config/config_entries/flow", {"handler": "onvif", "show_advanced_options": False})
        check("the ONVIF config flow opens", code == 200 and flow.get("step_id") == "user", flow)
        code, flow = ha.request("POST", f"/api/config/config_entries/flow/{flow.get('flow_id')}", {"auto": False})
        check("the ONVIF config flow asks for the device", code == 200 and flow.get("step_id") == "configure", flow)
        code, entry = ha.request("POST", f"/api/config/config_entries/flow/{flow.get('flow_id')}", {
            "name": "Porch", "host": "https://127.0.0.1", "port": web_port, "username": "owner", "password": password})
        check("Home Assistant's ONVIF integration adds the camera (GetProfiles, GetStreamUri over WS-Security digest)",
              code == 200 and entry.get("type") == "create_entry", entry)
        onvif_cameras = wait_for(30, lambda: [e for e, v in ha.states().items() if e.startswith("camera.porch")
                                                and v["state"] != "unavailable"])
        check("its camera entity appears (the main profile)", onvif_cameras, sorted(ha.states()))
        main = next((e for e in onvif_cameras or [] if "main" in e), None)
        hls = hls_url(ha, main) if main else None
        check("the ONVIF camera entity streams", hls, (main, hls))
        if hls:
            probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0",
                                    "-rw_timeout", "30000000", ha.base + hls], capture_output=True, timeout=90)
            check("the ONVIF stream plays: H.264 320x240 out of Home Assistant (ffprobe)",
                  b"h264,320,240" in probe.stdout, (probe.stdout, probe.stderr[-500:]))


        # Home Assistant's log: no warning or error from MQTT, templates or about us.
        time.sleep(1)
        problems = [line for line in ha.log().splitlines()
                    if re.search(r"\b(WARNING|ERROR|CRITICAL)\b", line)
                    and re.search(r"mqtt|template|kioskcam|camera|sensor|device_automation|automation|onvif|generic|stream|ffmpeg", line, re.I)]
        check("Home Assistant's log has no warning about the camera's entities", not problems, "\n".join(problems[:10]))
        others = [line for line in ha.log().splitlines() if re.search(r"\b(WARNING|ERROR)\b", line) and line not in problems]
        if others:
            print(f"(other warnings in Home Assistant's log, not about KioskCam: {len(others)}; the first: {others[0][:300]})")
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
        if all(results):
            shutil.rmtree(folder, ignore_errors=True)
        else:
            print(f"(logs kept in {folder})")
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
