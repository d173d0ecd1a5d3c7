#ifndef KIOSKCAM_CLINUXFB_SHIM_H
#define KIOSKCAM_CLINUXFB_SHIM_H
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/fb.h>

/* ioctl(2) is variadic; Swift cannot call it directly. */
static inline int kc_fb_ioctl(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
static inline unsigned long kc_fbioget_vscreeninfo(void) { return FBIOGET_VSCREENINFO; }
static inline unsigned long kc_fbioput_vscreeninfo(void) { return FBIOPUT_VSCREENINFO; }
static inline unsigned long kc_fbioget_fscreeninfo(void) { return FBIOGET_FSCREENINFO; }
static inline unsigned long kc_fbiopan_display(void) { return FBIOPAN_DISPLAY; }
static inline unsigned long kc_fbioblank(void) { return FBIOBLANK; }
#endif
