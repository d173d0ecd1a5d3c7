#ifndef KIOSKCAM_CMOSQUITTO_SHIM_H
#define KIOSKCAM_CMOSQUITTO_SHIM_H
#include <errno.h>
#include <mosquitto.h>
#endif
