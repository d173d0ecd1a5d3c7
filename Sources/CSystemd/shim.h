#ifndef KIOSKCAM_CSYSTEMD_SHIM_H
#define KIOSKCAM_CSYSTEMD_SHIM_H
#include <errno.h>
#include <systemd/sd-daemon.h>
#endif
