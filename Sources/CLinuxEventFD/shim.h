#ifndef KIOSKCAM_CLINUXEVENTFD_SHIM_H
#define KIOSKCAM_CLINUXEVENTFD_SHIM_H
/* eventfd(2), which Glibc's Swift module does not include: WakeUpEvent's kernel object. */
#include <sys/eventfd.h>

/* The flags are an anonymous enum; one call with both keeps them out of Swift. */
static inline int kc_eventfd_open(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
#endif
