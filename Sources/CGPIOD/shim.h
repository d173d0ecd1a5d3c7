#ifndef KIOSKCAM_CGPIOD_SHIM_H
#define KIOSKCAM_CGPIOD_SHIM_H
#include <errno.h>
#include <gpiod.h>
#endif
