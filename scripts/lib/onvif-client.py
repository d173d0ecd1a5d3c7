#!/usr/bin/env python3
"""The NVR's side of Tests/kioskcamTests/ONVIFDaemonTests.swift, run in its own network
namespace: finds the camera with WS-Discovery (a real multicast Probe), then reads it
with onvif-zeep-async (the client Home Assistant's ONVIF integration uses) and prints
what it found as one JSON object. Usage: onvif-client.py USER PASSWORD digest|text"""
import asyncio, json, sys, urllib.parse

from onvif import ONVIFCamera
from wsdiscovery import QName
from wsdiscovery.discovery import ThreadedWSDiscovery

user, password, mode = sys.argv[1], sys.argv[2], sys.argv[3]
found = {"xaddrs": [], "scopes": []}
discovery = ThreadedWSDiscovery()
discovery.start()
try:
    services = discovery.searchServices(types=[QName("http://www.onvif.org/ver10/network/wsdl", "NetworkVideoTransmitter")], timeout=4)
    for service in services:
        found["xaddrs"] += list(service.getXAddrs())
        found["scopes"] += [str(scope.getValue()) for scope in service.getScopes()]
finally:
    discovery.stop()


async def read(xaddr):
    url = urllib.parse.urlparse(xaddr)
    camera = ONVIFCamera(f"{url.scheme}://{url.hostname}", url.port, user, password, encrypt=(mode == "digest"))
    try:
        await camera.update_xaddrs()
        device = await camera.create_devicemgmt_service()
        info = await device.GetDeviceInformation()
        media = await camera.create_media_service()
        profiles = await media.GetProfiles()
        out = {"manufacturer": info.Manufacturer, "serial": info.SerialNumber, "profiles": [], "snapshot_bytes": 0}
        for profile in profiles:
            stream = await media.GetStreamUri({"StreamSetup": {"Stream": "RTP-Unicast", "Transport": {"Protocol": "RTSP"}},
                                               "ProfileToken": profile.token})
            snapshot = await media.GetSnapshotUri({"ProfileToken": profile.token})
            resolution = profile.VideoEncoderConfiguration.Resolution
            out["profiles"].append({"token": profile.token, "width": resolution.Width, "height": resolution.Height,
                                    "stream": stream.Uri, "snapshot": snapshot.Uri})
        image = await camera.get_snapshot(profiles[0].token)
        out["snapshot_bytes"] = len(image or b"")
        out["snapshot_is_jpeg"] = bool(image) and image[:2] == b"\xff\xd8"
        return out
    finally:
        await camera.close()

if found["xaddrs"]:
    try:
        found.update(asyncio.run(read(found["xaddrs"][0])))
    except Exception as error:  # reported to the test, which fails with it
        found["error"] = f"{type(error).__name__}: {error}"
print(json.dumps(found))
