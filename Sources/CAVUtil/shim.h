#ifndef KIOSKCAM_CAVUTIL_SHIM_H
#define KIOSKCAM_CAVUTIL_SHIM_H
#include <errno.h>
/* Every libavutil header the other FFmpeg modules include, so that they are owned by
   this module alone; the other shims include this file first (see CAVCodec/shim.h). */
#include <libavutil/attributes.h>
#include <libavutil/avutil.h>
#include <libavutil/buffer.h>
#include <libavutil/cpu.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixfmt.h>
#include <libavutil/rational.h>
#include <libavutil/samplefmt.h>
#include <libavutil/version.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>

/* Function-like macros are invisible to Swift: expose them as prefixed inline functions. */
static inline int kc_averror(int posix_errno) { return AVERROR(posix_errno); }
static inline int kc_averror_eof(void) { return AVERROR_EOF; }
static inline int kc_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t kc_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline AVRational kc_av_time_base_q(void) { return AV_TIME_BASE_Q; }

/* glibc's heap, where av_malloc's large buffers go (see KioskMedia/MediaMemory.swift). */
#include <malloc.h>
static inline int kc_malloc_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
static inline size_t kc_malloc_mapped_bytes(void) { return mallinfo2().hblkhd; }
/* No transparent huge pages for this process: x264 asks for them on its large buffers
   (madvise), and a 2 MiB page that khugepaged collapses later makes resident memory jump. */
#include <sys/prctl.h>
static inline int kc_disable_transparent_huge_pages(void) { return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); }
#endif
