#ifndef KIOSKCAM_CEVDEV_SHIM_H
#define KIOSKCAM_CEVDEV_SHIM_H
#include <errno.h>
#include <libevdev/libevdev.h>
#endif
