#ifndef KIOSKCAM_CCAIRO_SHIM_H
#define KIOSKCAM_CCAIRO_SHIM_H
#include <errno.h>
#include <cairo.h>
#endif
