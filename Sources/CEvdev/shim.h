#ifndef KIOSKCAM_CEVDEV_SHIM_H
#define KIOSKCAM_CEVDEV_SHIM_H
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <sys/inotify.h>
#include <linux/input.h>
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>

/* libevdev's enums and the kernel's macros as plain values Swift can read. */
static const unsigned int kc_evdev_read_flag_normal = LIBEVDEV_READ_FLAG_NORMAL;
static const unsigned int kc_evdev_read_flag_sync = LIBEVDEV_READ_FLAG_SYNC;
static const int kc_evdev_read_status_success = LIBEVDEV_READ_STATUS_SUCCESS;
static const int kc_evdev_read_status_sync = LIBEVDEV_READ_STATUS_SYNC;
static const int kc_evdev_uinput_open_managed = LIBEVDEV_UINPUT_OPEN_MANAGED;
static const int kc_clock_monotonic = CLOCK_MONOTONIC;

/* The event's time in nanoseconds. input_event's time field is a timeval on 64-bit
   systems but two separate fields on 32-bit ones with a 64-bit time_t; the kernel's
   input_event_sec/usec macros name both. */
static inline int64_t kc_evdev_event_nanoseconds(const struct input_event *event) {
    return (int64_t)event->input_event_sec * 1000000000 + (int64_t)event->input_event_usec * 1000;
}

/* An abs axis with the given range, for building uinput devices. */
static inline struct input_absinfo kc_evdev_absinfo(int minimum, int maximum) {
    struct input_absinfo info = {0};
    info.minimum = minimum;
    info.maximum = maximum;
    return info;
}

/* inotify event header size (the name follows, `len` bytes). */
static const size_t kc_inotify_event_size = sizeof(struct inotify_event);

/* Kernel constants the Swift code checks its own copies against (tests). */
static const unsigned int kc_EV_SYN = EV_SYN, kc_EV_KEY = EV_KEY, kc_EV_REL = EV_REL, kc_EV_ABS = EV_ABS, kc_EV_MSC = EV_MSC;
static const unsigned int kc_SYN_REPORT = SYN_REPORT, kc_SYN_MT_REPORT = SYN_MT_REPORT, kc_SYN_DROPPED = SYN_DROPPED;
static const unsigned int kc_MSC_TIMESTAMP = MSC_TIMESTAMP;
static const unsigned int kc_BTN_TOUCH = BTN_TOUCH, kc_BTN_LEFT = BTN_LEFT, kc_BTN_TOOL_PEN = BTN_TOOL_PEN,
                          kc_BTN_TOOL_FINGER = BTN_TOOL_FINGER, kc_KEY_MAX = KEY_MAX;
static const unsigned int kc_ABS_X = ABS_X, kc_ABS_Y = ABS_Y, kc_ABS_PRESSURE = ABS_PRESSURE, kc_ABS_MT_SLOT = ABS_MT_SLOT,
                          kc_ABS_MT_TOUCH_MAJOR = ABS_MT_TOUCH_MAJOR, kc_ABS_MT_WIDTH_MAJOR = ABS_MT_WIDTH_MAJOR, kc_ABS_MT_POSITION_X = ABS_MT_POSITION_X,
                          kc_ABS_MT_POSITION_Y = ABS_MT_POSITION_Y, kc_ABS_MT_TRACKING_ID = ABS_MT_TRACKING_ID,
                          kc_ABS_MT_PRESSURE = ABS_MT_PRESSURE, kc_ABS_MAX = ABS_MAX;
static const unsigned int kc_INPUT_PROP_POINTER = INPUT_PROP_POINTER, kc_INPUT_PROP_DIRECT = INPUT_PROP_DIRECT;
#endif
