#ifndef KIOSKCAM_CV4L2_SHIM_H
#define KIOSKCAM_CV4L2_SHIM_H
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

/* ioctl request numbers are _IOWR(...) macros, invisible to Swift: expose each once. */
static inline unsigned long kc_vidioc_querycap(void) { return VIDIOC_QUERYCAP; }
static inline unsigned long kc_vidioc_enum_fmt(void) { return VIDIOC_ENUM_FMT; }
static inline unsigned long kc_vidioc_enum_framesizes(void) { return VIDIOC_ENUM_FRAMESIZES; }
static inline unsigned long kc_vidioc_enum_frameintervals(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
static inline unsigned long kc_vidioc_g_fmt(void) { return VIDIOC_G_FMT; }
static inline unsigned long kc_vidioc_s_fmt(void) { return VIDIOC_S_FMT; }
static inline unsigned long kc_vidioc_try_fmt(void) { return VIDIOC_TRY_FMT; }
static inline unsigned long kc_vidioc_g_parm(void) { return VIDIOC_G_PARM; }
static inline unsigned long kc_vidioc_s_parm(void) { return VIDIOC_S_PARM; }
static inline unsigned long kc_vidioc_reqbufs(void) { return VIDIOC_REQBUFS; }
static inline unsigned long kc_vidioc_querybuf(void) { return VIDIOC_QUERYBUF; }
static inline unsigned long kc_vidioc_qbuf(void) { return VIDIOC_QBUF; }
static inline unsigned long kc_vidioc_dqbuf(void) { return VIDIOC_DQBUF; }
static inline unsigned long kc_vidioc_streamon(void) { return VIDIOC_STREAMON; }
static inline unsigned long kc_vidioc_streamoff(void) { return VIDIOC_STREAMOFF; }
static inline unsigned long kc_vidioc_queryctrl(void) { return VIDIOC_QUERYCTRL; }
static inline unsigned long kc_vidioc_query_ext_ctrl(void) { return VIDIOC_QUERY_EXT_CTRL; }
static inline unsigned long kc_vidioc_querymenu(void) { return VIDIOC_QUERYMENU; }
static inline unsigned long kc_vidioc_g_ctrl(void) { return VIDIOC_G_CTRL; }
static inline unsigned long kc_vidioc_s_ctrl(void) { return VIDIOC_S_CTRL; }
static inline unsigned long kc_vidioc_g_input(void) { return VIDIOC_G_INPUT; }
static inline unsigned long kc_vidioc_s_input(void) { return VIDIOC_S_INPUT; }

static inline unsigned int kc_v4l2_fourcc(char a, char b, char c, char d) { return v4l2_fourcc(a, b, c, d); }
static inline unsigned int kc_v4l2_ctrl_flag_next_ctrl(void) { return V4L2_CTRL_FLAG_NEXT_CTRL; }
static inline unsigned int kc_v4l2_ctrl_flag_next_compound(void) { return V4L2_CTRL_FLAG_NEXT_COMPOUND; }
static inline void *kc_map_failed(void) { return MAP_FAILED; }

/* libv4l2's v4l2_ioctl is variadic, which Swift cannot call: one typed wrapper. */
static inline int kc_v4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }
#endif
