#ifndef KIOSKCAM_CAVCODEC_SHIM_H
#define KIOSKCAM_CAVCODEC_SHIM_H
/* Dependencies first: their headers then belong to their own modules, and the
   include guards keep FFmpeg from pulling them in here a second time. */
#include "../CAVUtil/shim.h"
#include <libavcodec/avcodec.h>

static inline int kc_av_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int kc_av_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline int kc_av_pkt_flag_corrupt(void) { return AV_PKT_FLAG_CORRUPT; }
static inline int kc_av_codec_flag_qscale(void) { return AV_CODEC_FLAG_QSCALE; }
static inline int kc_ff_qp2lambda(void) { return FF_QP2LAMBDA; }
#endif
