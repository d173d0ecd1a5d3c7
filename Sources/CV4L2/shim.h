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

/* --- added for KioskV4L2 ------------------------------------------------------- */
#include <time.h>

/* v4l2_open is variadic; kioskcam opens with open(2) itself (so a file that is not a
   V4L2 device fails quietly, without libv4l2's stderr message) and then hands the fd
   to libv4l2 — exactly what v4l2_open does inside. */
static inline int kc_v4l2_fd_open(int fd) { return v4l2_fd_open(fd, 0); }

/* Control ids are (CLASS_BASE + n) expressions, which Swift does not import. */
static inline unsigned int kc_v4l2_cid_brightness(void) { return V4L2_CID_BRIGHTNESS; }
static inline unsigned int kc_v4l2_cid_contrast(void) { return V4L2_CID_CONTRAST; }
static inline unsigned int kc_v4l2_cid_auto_white_balance(void) { return V4L2_CID_AUTO_WHITE_BALANCE; }
static inline unsigned int kc_v4l2_cid_white_balance_temperature(void) { return V4L2_CID_WHITE_BALANCE_TEMPERATURE; }
static inline unsigned int kc_v4l2_cid_exposure_auto(void) { return V4L2_CID_EXPOSURE_AUTO; }
static inline unsigned int kc_v4l2_cid_exposure_absolute(void) { return V4L2_CID_EXPOSURE_ABSOLUTE; }
static inline unsigned int kc_v4l2_cid_focus_auto(void) { return V4L2_CID_FOCUS_AUTO; }
static inline unsigned int kc_v4l2_cid_focus_absolute(void) { return V4L2_CID_FOCUS_ABSOLUTE; }
static inline unsigned int kc_v4l2_cid_auto_focus_start(void) { return V4L2_CID_AUTO_FOCUS_START; }
static inline unsigned int kc_v4l2_cid_zoom_absolute(void) { return V4L2_CID_ZOOM_ABSOLUTE; }
static inline unsigned int kc_v4l2_cid_flash_led_mode(void) { return V4L2_CID_FLASH_LED_MODE; }
static inline int kc_v4l2_exposure_manual(void) { return V4L2_EXPOSURE_MANUAL; }
static inline int kc_v4l2_exposure_auto(void) { return V4L2_EXPOSURE_AUTO; }
static inline int kc_v4l2_exposure_aperture_priority(void) { return V4L2_EXPOSURE_APERTURE_PRIORITY; }
static inline int kc_v4l2_flash_led_mode_none(void) { return V4L2_FLASH_LED_MODE_NONE; }
static inline int kc_v4l2_flash_led_mode_torch(void) { return V4L2_FLASH_LED_MODE_TORCH; }

/* The structs Swift reads field by field: a layout change would be silent there. */
_Static_assert(sizeof(struct v4l2_capability) == 104, "v4l2_capability layout");
_Static_assert(sizeof(struct v4l2_queryctrl) == 68, "v4l2_queryctrl layout");
_Static_assert(sizeof(struct v4l2_querymenu) == 44, "v4l2_querymenu layout");
_Static_assert(sizeof(struct v4l2_format) == 208, "v4l2_format layout");
#endif
