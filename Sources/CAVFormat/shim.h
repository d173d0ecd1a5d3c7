#ifndef KIOSKCAM_CAVFORMAT_SHIM_H
#define KIOSKCAM_CAVFORMAT_SHIM_H
/* Dependencies first: their headers then belong to their own modules, and the
   include guards keep FFmpeg from pulling them in here a second time. */
#include "../CAVUtil/shim.h"
#include "../CAVCodec/shim.h"
#include <libavformat/avformat.h>
#include <libavformat/avio.h>

static inline int kc_avfmt_globalheader(void) { return AVFMT_GLOBALHEADER; }
static inline int kc_avfmt_nofile(void) { return AVFMT_NOFILE; }
static inline int kc_avseek_size(void) { return AVSEEK_SIZE; }
static inline int kc_avio_flag_write(void) { return AVIO_FLAG_WRITE; }
#endif
