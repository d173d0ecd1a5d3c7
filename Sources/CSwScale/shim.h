#ifndef KIOSKCAM_CSWSCALE_SHIM_H
#define KIOSKCAM_CSWSCALE_SHIM_H
/* Dependencies first: their headers then belong to their own modules, and the
   include guards keep FFmpeg from pulling them in here a second time. */
#include "../CAVUtil/shim.h"
#include <libswscale/swscale.h>

static inline int kc_sws_bilinear(void) { return SWS_BILINEAR; }
static inline int kc_sws_bicubic(void) { return SWS_BICUBIC; }
static inline int kc_sws_point(void) { return SWS_POINT; }
/* RGB in: each pixel's own chroma (SIMD), then filtered down to 4:2:0, instead of the
   C-only average of pixel pairs swscale otherwise does first. */
static inline int kc_sws_full_chroma_input(void) { return SWS_FULL_CHR_H_INP; }
#endif
