"""The `kioskcam run` configuration every script test starts from: the built-in
test-pattern camera and tone microphone, an in-memory screen, the fastest encoder
preset, and everything (media, state, the control socket) in one folder. A test adds
its own sections after it."""


def base_config(folder, size="320x240"):
    return f"""[storage]
media_root = "{folder}/media"
[camera]
source = "test"
size = "{size}"
[microphone]
source = "tone"
[encoder]
preset = "ultrafast"
[screen]
framebuffer = "memory"
[control]
state_directory = "{folder}/state"
socket = "{folder}/control.sock"
socket_group = ""
"""
